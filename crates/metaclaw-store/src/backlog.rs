//! The bound on what recording holds in memory.
//!
//! Turns handed to the recorder wait in memory until the writer commits them. Under a burst
//! the writer can fall behind the proxy, so the queue is bounded by (estimated) bytes: new
//! requests wait for room before they are forwarded ([`Backlog::wait_for_room`]); a turn whose
//! response was already sent is always queued. Nothing acknowledged is ever dropped, and
//! memory stays at most the limit plus the requests in flight.
//!
//! After a burst, the allocator keeps the freed pages; once the writer has drained enough
//! bytes and the queue is empty, they are handed back to the operating system.

use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;
use tokio::sync::Notify;

/// Default bound on queued turns: enough for a few hundred large agent turns.
pub const DEFAULT_LIMIT_BYTES: usize = 48 * 1024 * 1024;
/// Give memory back to the OS after committing this much since the last time.
const RETURN_AFTER_BYTES: usize = 16 * 1024 * 1024;

#[derive(Debug)]
pub struct Backlog {
    queued: AtomicUsize,
    limit: usize,
    room: Notify,
    committed_since_return: AtomicUsize,
}

impl Backlog {
    pub fn new(limit: usize) -> Backlog {
        Backlog {
            queued: AtomicUsize::new(0),
            limit: limit.max(1),
            room: Notify::new(),
            committed_since_return: AtomicUsize::new(0),
        }
    }

    /// Estimated bytes queued and not yet committed.
    pub fn queued(&self) -> usize {
        self.queued.load(Ordering::Acquire)
    }

    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Resolves at once while the queue is under its limit, else when the writer has made
    /// room. Call before starting work that will be recorded.
    pub async fn wait_for_room(&self) {
        loop {
            let notified = self.room.notified();
            tokio::pin!(notified);
            // Registered before the check, so a release between the check and the await
            // still wakes this waiter.
            notified.as_mut().enable();
            if self.queued() < self.limit {
                return;
            }
            notified.await;
        }
    }

    pub(crate) fn add(&self, bytes: usize) {
        self.queued.fetch_add(bytes, Ordering::AcqRel);
    }

    /// `bytes` were committed (or given up on): make room and wake waiting requests.
    pub(crate) fn release(&self, bytes: usize) {
        if bytes == 0 {
            return;
        }
        let _ = self
            .queued
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |q| {
                Some(q.saturating_sub(bytes))
            });
        self.committed_since_return
            .fetch_add(bytes, Ordering::Relaxed);
        self.room.notify_waiters();
    }

    /// Whether the writer, now idle, should return freed memory to the OS.
    pub(crate) fn take_return_due(&self) -> bool {
        if self.committed_since_return.load(Ordering::Relaxed) < RETURN_AFTER_BYTES {
            return false;
        }
        self.committed_since_return.store(0, Ordering::Relaxed);
        true
    }
}

/// What a JSON value roughly occupies on the heap once parsed (strings, vectors, maps and
/// their nodes), so the bound is in memory, not in turns.
pub(crate) fn estimate(value: &Value) -> usize {
    const NODE: usize = 32;
    match value {
        Value::String(s) => NODE + s.len(),
        Value::Array(items) => NODE + items.iter().map(estimate).sum::<usize>(),
        Value::Object(map) => {
            NODE + map
                .iter()
                .map(|(k, v)| NODE + k.len() + estimate(v))
                .sum::<usize>()
        }
        _ => NODE,
    }
}

/// Hand pages the allocator keeps after a burst back to the OS (glibc keeps them otherwise).
pub fn return_memory_to_os() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks the allocator's own free lists; it takes no pointers and
    // is safe to call from any thread at any time.
    #[allow(unsafe_code)]
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_full_queue_makes_requests_wait_until_the_writer_commits() {
        let backlog = Arc::new(Backlog::new(100));
        backlog.wait_for_room().await; // empty: no wait
        backlog.add(150);
        let waiter = tokio::spawn({
            let backlog = backlog.clone();
            async move { backlog.wait_for_room().await }
        });
        tokio::time::sleep(Duration::from_secs(60)).await;
        assert!(
            !waiter.is_finished(),
            "a request went ahead while the queue was full"
        );
        backlog.release(100);
        tokio::time::timeout(Duration::from_secs(1), waiter)
            .await
            .expect("released room must wake the waiting request")
            .unwrap();
        assert_eq!(backlog.queued(), 50);
    }

    #[test]
    fn memory_is_returned_after_enough_was_committed() {
        let backlog = Backlog::new(1 << 30);
        backlog.add(RETURN_AFTER_BYTES);
        backlog.release(RETURN_AFTER_BYTES - 1);
        assert!(!backlog.take_return_due());
        backlog.release(1);
        assert!(backlog.take_return_due());
        assert!(!backlog.take_return_due(), "due once per drained amount");
    }

    #[test]
    fn estimates_grow_with_the_parsed_size() {
        let small = estimate(&serde_json::json!({"a": "b"}));
        let big = estimate(&serde_json::json!({"a": "b".repeat(10_000), "list": [1, 2, 3]}));
        assert!(small < 200);
        assert!(big > 10_000 && big < 11_000, "{big}");
    }
}
