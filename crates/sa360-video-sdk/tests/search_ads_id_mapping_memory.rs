//! The ID-mapping stream parses a large file in bounded memory: a counting
//! allocator watches the whole process (client and in-process fake) while
//! 32 MiB of CSV stream through. One test only, so nothing else allocates
//! in this binary meanwhile.

#[path = "it/search_ads_support.rs"]
mod support;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use futures::StreamExt;
use sa360_video_fakes::{IdMappingSize, SearchAdsFake};
use sa360_video_sdk::search_ads::WriteOptions;

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged; only
// counters are updated around it.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: same contract as the caller's.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                let grow = new_size - layout.size();
                let live = LIVE.fetch_add(grow, Ordering::Relaxed) + grow;
                PEAK.fetch_max(live, Ordering::Relaxed);
            } else {
                LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const FILE_BYTES: u64 = 32 * 1024 * 1024;
const HEAP_BUDGET: usize = 8 * 1024 * 1024;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_file_streams_in_bounded_memory() {
    let fake =
        support::start(SearchAdsFake::builder().id_mapping_size(IdMappingSize::Bytes(FILE_BYTES)))
            .await;
    let client = support::client(&fake, support::fast_retries(2), WriteOptions::default());
    let (agency, advertiser) = support::advertiser(&fake, 0);
    let len = fake
        .id_mapping_len(agency.get(), advertiser.get())
        .expect("known");
    let want_rows = fake
        .id_mapping_rows(agency.get(), advertiser.get())
        .expect("known");
    assert!(len > FILE_BYTES - 1024);

    let baseline = LIVE.load(Ordering::Relaxed);
    PEAK.store(baseline, Ordering::Relaxed);
    let mut stream = client.id_mapping(agency, advertiser).stream();
    let mut rows = 0u64;
    let mut campaigns = 0u64;
    while let Some(row) = stream.next().await {
        let row = row.expect("a valid row");
        rows += 1;
        campaigns += u64::from(row.legacy.campaign_id.is_some());
    }
    let growth = PEAK.load(Ordering::Relaxed).saturating_sub(baseline);
    assert_eq!(rows, want_rows);
    assert!(campaigns > 0);
    assert!(
        growth < HEAP_BUDGET,
        "streaming {len} bytes grew the heap by {growth} bytes (budget {HEAP_BUDGET})"
    );
    eprintln!("{len} bytes, {rows} rows, peak heap growth {growth} bytes");
}
