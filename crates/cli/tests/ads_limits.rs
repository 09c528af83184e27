//! `apictl ads` against a hostile server: an answer over `--max-body`, one
//! that trickles slower than `--stall-timeout`, and limits out of range. Each
//! ends with exit 1, a message that says what happened and a hint that names
//! the flag to change.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

use common::Apictl;

/// What the server answers to every request.
#[derive(Clone, Copy)]
enum Answer {
    /// `Content-Length: 10 GiB`, then zeros until the client leaves.
    Huge,
    /// A JSON list, one byte per second.
    Trickle,
}

fn serve(stream: TcpStream, answer: Answer) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut line = String::new();
    // Read the request head; the bodies of these GETs are empty.
    while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
        if line == "\r\n" {
            break;
        }
        line.clear();
    }
    let mut out = stream;
    let length: u64 = match answer {
        Answer::Huge => 10 * 1024 * 1024 * 1024,
        Answer::Trickle => 1000,
    };
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {length}\r\n\r\n"
    );
    if out.write_all(head.as_bytes()).is_err() {
        return;
    }
    match answer {
        Answer::Huge => {
            let zeros = vec![b'0'; 64 * 1024];
            while out.write_all(&zeros).is_ok() {}
        }
        Answer::Trickle => {
            for _ in 0..length {
                if out.write_all(b" ").is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_secs(1));
            }
        }
    }
}

/// A server on a free loopback port; its threads end with the test process.
fn hostile(answer: Answer) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let address = listener.local_addr().expect("an address");
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || serve(stream, answer));
        }
    });
    format!("http://{address}")
}

fn apictl(url: &str) -> Apictl {
    Apictl::new()
        .env("SEARCH_ADS_URL", url)
        .env("SEARCH_ADS_TOKEN", "t")
        .env("SEARCH_ADS_AGENCY_ID", "1")
        .env("SEARCH_ADS_ADVERTISER_ID", "2")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_over_max_body_names_the_flag() {
    let apictl = apictl(&hostile(Answer::Huge));
    let run = apictl
        .run(&["ads", "saved-columns", "--max-body", "4096"])
        .await;
    run.expect(1);
    assert!(
        run.stderr
            .contains("the answer is larger than the limit of 4096 bytes"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("announced 10737418240 bytes"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("hint: raise --max-body"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("HttpOptions"), "{}", run.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trickle_ends_at_the_stall_timeout_and_names_the_flag() {
    let apictl = apictl(&hostile(Answer::Trickle));
    let run = apictl
        .run(&["ads", "saved-columns", "--stall-timeout", "2"])
        .await;
    run.expect(1);
    assert!(run.stderr.contains("the answer stalled"), "{}", run.stderr);
    assert!(run.stderr.contains("in 2 s"), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("hint: try again later, or raise --stall-timeout"),
        "{}",
        run.stderr
    );
}

#[tokio::test]
async fn limits_out_of_range_are_refused_before_sending() {
    // Nothing listens here: a request would fail differently.
    let apictl = apictl("http://127.0.0.1:9");
    for (flag, value, hint) in [
        ("--timeout", "0", "from 1 to 86400"),
        ("--stall-timeout", "100000", "from 1 to 86400"),
        ("--max-body", "10", "at least 1024 bytes"),
        ("--max-download", "0", "at least 1024 bytes"),
    ] {
        let run = apictl.run(&["ads", "saved-columns", flag, value]).await;
        run.expect(1);
        assert!(run.stderr.contains(flag), "{flag}: {}", run.stderr);
        assert!(run.stderr.contains(hint), "{flag}: {}", run.stderr);
    }
}
