//! The ID-mapping download: a CSV file with JSON cells.

use std::collections::HashSet;

use sa360_video_fakes::{IdMappingSize, SearchAdsFake};
use serde_json::{Value, json};

use crate::common::{client, json};

/// Splits one CSV line of the ID-mapping file into its three cells.
pub fn split_row(line: &str) -> Vec<String> {
    let mut cells = Vec::new();
    let mut cell = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cell.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => cells.push(std::mem::take(&mut cell)),
            _ => cell.push(c),
        }
    }
    assert!(!quoted, "unterminated quote in {line}");
    cells.push(cell);
    cells
}

#[tokio::test]
async fn id_mapping_file_is_a_csv_with_json_cells() {
    let fake = SearchAdsFake::builder()
        .id_mapping_size(IdMappingSize::Rows(1000))
        .start()
        .await
        .unwrap();
    let a = fake.accounts()[0].clone();
    let url = format!(
        "{}/agency/{}/advertiser/{}/idmapping",
        fake.base_url(),
        a.agency_id,
        a.advertiser_id
    );
    let response = client()
        .get(format!("{url}?alt=media"))
        .bearer_auth(fake.dev_token())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/csv")
    );
    let expected_len = fake.id_mapping_len(a.agency_id, a.advertiser_id).unwrap();
    assert_eq!(response.content_length(), Some(expected_len));
    let text = response.text().await.unwrap();
    assert_eq!(text.len() as u64, expected_len);
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("Entity Type,Legacy IDs,New IDs"));
    let mut kinds = HashSet::new();
    let mut count = 0;
    for line in lines {
        let cells = split_row(line);
        assert_eq!(cells.len(), 3, "{line}");
        kinds.insert(cells[0].clone());
        for cell in &cells[1..] {
            let object: serde_json::Map<String, Value> = serde_json::from_str(cell).unwrap();
            assert!(object.values().all(Value::is_string), "{cell}");
        }
        count += 1;
    }
    assert_eq!(count, 1000);
    assert_eq!(
        kinds,
        ["CUSTOMER", "CAMPAIGN", "AD_GROUP", "CRITERION"]
            .map(String::from)
            .into()
    );
    // Without alt=media the method answers an empty JSON object.
    let (status, body) = json(client().get(&url).bearer_auth(fake.dev_token())).await;
    assert_eq!((status, body), (200, json!({})));
    let (status, _) = json(
        client()
            .get(format!(
                "{}/agency/1/advertiser/2/idmapping?alt=media",
                fake.base_url()
            ))
            .bearer_auth(fake.dev_token()),
    )
    .await;
    assert_eq!(status, 403);
    // Sized in bytes.
    fake.set_id_mapping_size(IdMappingSize::Bytes(50_000));
    let len = fake.id_mapping_len(a.agency_id, a.advertiser_id).unwrap();
    assert!(len <= 50_000 && len > 49_000, "{len}");
    let body = client()
        .get(format!("{url}?alt=media"))
        .bearer_auth(fake.dev_token())
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert_eq!(body.len() as u64, len);
    assert_eq!(fake.ledger().counts().id_mapping_downloads, 2);
}
