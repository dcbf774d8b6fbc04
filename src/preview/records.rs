//! The records of a JSON Lines session made ready on every core, handed out in
//! history order.
//!
//! Reading a record again, splicing its edits and stand-ins in and parsing it
//! is the same work for every record and needs nothing from the ones before
//! it; rendering does (turns merge, items are numbered). So the records go in
//! bounded batches: while the workers prepare one batch, the calling thread
//! renders the one before it, in order. At most two batches are held, each at
//! most [`BATCH_BYTES`] of record text (one record longer than that is a batch
//! of its own, and is prepared only once the batch before it is out, so a
//! long line is never held twice).

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::model::Record;

/// Record text per batch: enough to keep every core busy, small beside a
/// long line.
const BATCH_BYTES: u64 = 8 << 20;
/// Records per batch, so that a batch of tiny lines is handed out early too.
const BATCH_RECORDS: usize = 4096;

/// What a prepared record became: `None` when it is left out (dropped by the
/// rewrite, or not JSON once edited).
pub type Prepared = anyhow::Result<Option<serde_json::Value>>;

/// Calls `each` on every record of `records` in order, with what `prepare`
/// made of it (read from the file, edited, parsed); `prepare` runs on up to
/// `threads` workers (0: one per core, as the reader's `-j`). The first error
/// (reading, or from `each`) stops it, after the records before it were handed
/// out, as a loop would.
pub fn each<P, E>(records: &[Record], threads: usize, prepare: P, mut each: E) -> anyhow::Result<()>
where
    P: Fn(&Record) -> Prepared + Sync,
    E: FnMut(&Record, Option<serde_json::Value>) -> anyhow::Result<()>,
{
    let workers = crate::reader::workers(threads);
    let one = &prepare;
    let mut hand_out = |batch: &[Record], ready: Vec<Prepared>| -> anyhow::Result<()> {
        batch.iter().zip(ready).try_for_each(|(r, v)| each(r, v?))
    };
    let mut rest = records;
    // The batch prepared last, not handed out yet.
    let mut held: (&[Record], Vec<Prepared>) = (&[], Vec::new());
    while !rest.is_empty() {
        let (batch, tail) = rest.split_at(batch_len(rest));
        rest = tail;
        let long = batch.len() == 1 && batch[0].len > BATCH_BYTES;
        if long || workers == 1 {
            let (done, ready) = std::mem::take(&mut held);
            hand_out(done, ready)?;
            held = (batch, batch.iter().map(one).collect());
            continue;
        }
        let next = AtomicUsize::new(0);
        let ready = std::thread::scope(|s| -> anyhow::Result<Vec<Prepared>> {
            let work = || {
                let mut mine = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(r) = batch.get(i) else { return mine };
                    mine.push((i, one(r)));
                }
            };
            let handles: Vec<_> = (0..workers.min(batch.len())).map(|_| s.spawn(work)).collect();
            // Meanwhile, the batch before this one goes out.
            let (done, ready) = std::mem::take(&mut held);
            hand_out(done, ready)?;
            let mut slots: Vec<Option<Prepared>> = std::iter::repeat_with(|| None).take(batch.len()).collect();
            for h in handles {
                let mine = h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
                for (i, v) in mine {
                    slots[i] = Some(v);
                }
            }
            Ok(slots.into_iter().map(|v| v.expect("every record of the batch was taken by a worker")).collect())
        })?;
        held = (batch, ready);
    }
    let (done, ready) = held;
    hand_out(done, ready)
}

/// How many of `records` (at least one) make the next batch.
fn batch_len(records: &[Record]) -> usize {
    let mut bytes = 0;
    let n = records.iter().take(BATCH_RECORDS).take_while(|r| {
        bytes += r.len;
        bytes <= BATCH_BYTES
    });
    n.count().max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::File;
    use std::os::unix::fs::FileExt as _;

    /// A record's text read from `file`, parsed.
    fn read(file: &File, r: &Record) -> Prepared {
        let mut buf = vec![0; usize::try_from(r.len).unwrap()];
        file.read_exact_at(&mut buf, r.offset)?;
        Ok(Some(serde_json::from_slice(&buf)?))
    }

    fn rec(line: u64, offset: u64, len: u64) -> Record {
        Record { line, offset, len, part: None }
    }

    #[test]
    fn batches_stop_at_the_byte_budget_and_hold_at_least_one_record() {
        let small: Vec<Record> = (0..10).map(|i| rec(i + 1, i * (3 << 20), 3 << 20)).collect();
        assert_eq!(batch_len(&small), 2);
        let long = [rec(1, 0, 100 << 20), rec(2, 100 << 20, 10)];
        assert_eq!(batch_len(&long), 1);
        let tiny: Vec<Record> = (0..10_000).map(|i| rec(i + 1, i * 10, 10)).collect();
        assert_eq!(batch_len(&tiny), BATCH_RECORDS);
    }

    #[test]
    fn records_come_out_in_order_with_their_own_text() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let mut text = Vec::new();
        let mut records = Vec::new();
        for i in 0..20_000u64 {
            let line = format!("{{\"n\":{i}}}\n");
            records.push(rec(i + 1, text.len() as u64, line.len() as u64 - 1));
            text.extend_from_slice(line.as_bytes());
        }
        std::fs::write(&path, &text).unwrap();
        let file = File::open(&path).unwrap();
        let want: Vec<(u64, Option<u64>)> =
            (1..=20_000u64).map(|l| (l, (!l.is_multiple_of(7)).then_some(l - 1))).collect();
        for threads in [1, 2, 3] {
            let mut seen = Vec::new();
            let on = std::sync::Mutex::new(std::collections::HashSet::new());
            let (busy, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
            let prepare = |r: &Record| {
                on.lock().unwrap().insert(std::thread::current().id());
                most.fetch_max(busy.fetch_add(1, Ordering::SeqCst) + 1, Ordering::SeqCst);
                std::hint::black_box((0..200).sum::<u64>());
                busy.fetch_sub(1, Ordering::SeqCst);
                if r.line.is_multiple_of(7) { Ok(None) } else { read(&file, r) }
            };
            each(&records, threads, prepare, |r, v| {
                seen.push((r.line, v.map(|v| v["n"].as_u64().unwrap())));
                Ok(())
            })
            .unwrap();
            assert_eq!(seen, want, "{threads} threads");
            // `-j 1` prepares on the calling thread alone; more, on at most that many workers at once.
            let on = on.into_inner().unwrap();
            let here = on.contains(&std::thread::current().id());
            assert_eq!(here, threads == 1, "{threads} threads");
            assert!(most.into_inner() <= threads, "{threads} threads");
        }
    }

    #[test]
    fn an_error_stops_after_the_records_before_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, b"{}\n{}\n").unwrap();
        let file = File::open(&path).unwrap();
        // The third record points past the end of the file.
        let records: Vec<Record> = vec![rec(1, 0, 2), rec(2, 3, 2), rec(3, 100, 2), rec(4, 0, 2)];
        let mut seen = Vec::new();
        let r = each(
            &records,
            0,
            |r| read(&file, r),
            |r, _| {
                seen.push(r.line);
                Ok(())
            },
        );
        assert!(r.is_err());
        assert_eq!(seen, vec![1, 2]);
    }
}
