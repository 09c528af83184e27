use super::*;

#[test]
fn done_records_round_trip() {
    let done = Done {
        rows: 4..30,
        stored: 20,
        rejected: 2,
        mark: 99,
        resend: vec![6..9, 11..12],
        fingerprint: 0xabc,
        must_sync: false,
    };
    assert_eq!(
        done.line(),
        "done 5-30 stored=20 rejected=2 mark=99 resend=7-9,12-12 fp=0000000000000abc\n"
    );
    assert_eq!(Done::parse(done.line().trim_end()), Some(done));
    assert_eq!(
        Done::parse("done 5-30 stored=1 rejected=0 mark=0 resend=1-2 fp=0"),
        None
    );
    assert_eq!(
        Done::parse("done 5-3 stored=1 rejected=0 mark=0 resend=- fp=0"),
        None
    );
}

#[test]
fn a_journal_resumes_with_what_it_settled_and_cuts_a_torn_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j");
    let j = WriteJournal::new(&path, "in").note("report a.csv");
    let (f, state) = JournalFile::open(&j).unwrap();
    assert!(state.is_none());
    f.send(0..10).unwrap();
    f.done(&Done {
        rows: 0..10,
        stored: 7,
        rejected: 1,
        mark: 50,
        resend: vec![Range { start: 2, end: 4 }],
        fingerprint: 1,
        must_sync: true,
    })
    .unwrap();
    drop(f);
    let mut raw = OpenOptions::new().append(true).open(&path).unwrap();
    raw.write_all(b"done 11-20 stored=10 rej").unwrap();
    drop(raw);
    let state = WriteJournal::read(&path).unwrap().unwrap();
    assert_eq!(state.settled, vec![0..2, 4..10]);
    assert_eq!((state.stored(), state.rejected(), state.mark()), (7, 1, 50));
    assert_eq!(state.note(), Some("report a.csv"));
    assert_eq!(state.sent, vec![0..10]);
    assert_eq!(state.checkpoints(), &[(10, 1)]);
    // A rerun with a new note appends it, after cutting the torn line.
    let (_, again) = JournalFile::open(&j.clone().note("report b.csv")).unwrap();
    assert_eq!(again.unwrap().note(), Some("report a.csv"));
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.ends_with("fp=0000000000000001\nnote report b.csv\n"),
        "{text}"
    );
    // Another input is refused.
    let e = JournalFile::open(&WriteJournal::new(&path, "other")).unwrap_err();
    assert!(e.to_string().contains("another input"), "{e}");
}

#[cfg(unix)]
#[test]
fn symlinks_are_never_followed() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "keep me").unwrap();
    let path = dir.path().join("j");
    std::os::unix::fs::symlink(&victim, dir.path().join("j.new")).unwrap();
    JournalFile::open(&WriteJournal::new(&path, "in")).unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    std::fs::remove_file(&path).unwrap();
    // A journal that is a symlink is refused, its target untouched.
    std::os::unix::fs::symlink(&victim, &path).unwrap();
    let e = JournalFile::open(&WriteJournal::new(&path, "in")).unwrap_err();
    assert!(e.to_string().contains("symlink"), "{e}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
}

#[test]
fn a_journal_has_one_writer_and_a_resume_never_starts_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j");
    let lock = dir.path().join("j.lock");
    let j = WriteJournal::new(&path, "in");
    drop(JournalFile::open(&j).unwrap());
    // Resumed: the case that was opened read/write, not for appending.
    let (first, _) = JournalFile::open(&j).unwrap();
    let before = std::fs::read(&path).unwrap();
    // Refused before it reads, cuts or appends anything.
    let e = JournalFile::open(&j.clone().note("other")).unwrap_err();
    assert!(
        matches!(&e, Error::JournalBusy { path: p } if *p == path.display().to_string()),
        "{e:?}"
    );
    assert!(e.to_string().contains("held by another upload"), "{e}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
    // Records go to the end of the file, whatever else was appended.
    let mut other = OpenOptions::new().append(true).open(&path).unwrap();
    other.write_all(b"note x\n").unwrap();
    first.send(0..5).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.ends_with("input in\nnote x\nsend 1-5\n"), "{text}");
    assert!(lock.exists());
    drop(first);
    assert!(!lock.exists(), "let go with the journal");
    let (again, state) = JournalFile::open(&j).unwrap();
    assert_eq!(state.unwrap().sent, vec![0..5]);
    again.finish().unwrap();
    drop(again);
    // A resume of a journal that is gone is refused; none is created.
    let e = JournalFile::open(&j.clone().resume_only()).unwrap_err();
    assert!(matches!(e, Error::JournalGone { .. }), "{e:?}");
    assert!(!path.exists());
}

#[test]
fn records_that_overflow_or_contradict_are_refused_with_their_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j");
    let head = "facade write journal 1\ninput in\nsend 1-10\n";
    let max = u64::MAX;
    for (records, line, why) in [
        (
            format!(
                "done 1-10 stored={max} rejected=0 mark=0 resend=- fp=1\n\
                 done 1-10 stored={max} rejected=0 mark=0 resend=- fp=1\n"
            ),
            4,
            "settles 10",
        ),
        (
            "done 1-10 stored=5 rejected=5 mark=0 resend=3-3 fp=1\n".to_owned(),
            4,
            "settles 9",
        ),
        (
            "done 1-5 stored=5 rejected=0 mark=0 resend=- fp=1\n\
             done 6-10 stored=5 rejected=0 mark=0 resend=- fp=2\n\
             done 1-5 stored=0 rejected=0 mark=0 resend=- fp=3\n"
                .to_owned(),
            6,
            "not line 4's",
        ),
        (
            "done 1-10 stored=1 rejected=0 mark=0 resend=5-6,2-3 fp=1\n".to_owned(),
            4,
            "not a journal record",
        ),
    ] {
        std::fs::write(&path, format!("{head}{records}")).unwrap();
        let e = WriteJournal::read(&path).unwrap_err();
        match &e {
            Error::JournalDamaged {
                line: l, reason, ..
            } => {
                assert_eq!(*l, Some(line), "{e}");
                assert!(reason.contains(why), "{e}");
            }
            other => panic!("{other:?}"),
        }
        assert!(e.to_string().contains(&format!("line {line}: ")), "{e}");
    }
}

#[test]
fn the_row_print_sees_identity_and_values() {
    use chrono::DateTime;
    let c = Conversion::new("a", DateTime::from_timestamp_millis(1).unwrap());
    let print = |cs: &[&Conversion]| {
        let mut p = RowPrint::default();
        cs.iter().for_each(|c| p.push(c));
        p.value()
    };
    let mut d = c.clone();
    d.quantity_millis = Some(2);
    assert_eq!(print(&[&c, &d]), print(&[&c.clone(), &d.clone()]));
    assert_ne!(print(&[&c, &d]), print(&[&d, &c]));
    assert_ne!(print(&[&c]), print(&[&d]));
}
