//! The streamed response body: plays a list of steps and reports how the stream ended.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll, ready};

use bytes::Bytes;
use futures_util::Stream;
use std::future::Future;
use tokio::time::Sleep;

use super::Shared;
use super::render::Step;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Ending {
    Running,
    Completed,
    Reset,
}

/// Counts the stream as cancelled when it is dropped before it ended (the client or the proxy
/// went away), as completed when it yielded its last step, or as reset when it aborted on purpose.
pub(crate) struct StreamGuard {
    shared: Arc<Shared>,
    ending: Ending,
}

impl StreamGuard {
    pub fn new(shared: Arc<Shared>) -> Self {
        Self {
            shared,
            ending: Ending::Running,
        }
    }

    fn end(&mut self, ending: Ending) {
        if self.ending != Ending::Running {
            return;
        }
        self.ending = ending;
        match ending {
            Ending::Completed => self
                .shared
                .completed_streams
                .fetch_add(1, Ordering::Relaxed),
            Ending::Reset => self.shared.reset_streams.fetch_add(1, Ordering::Relaxed),
            Ending::Running => 0,
        };
    }
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        if self.ending == Ending::Running {
            self.shared
                .cancelled_streams
                .fetch_add(1, Ordering::Relaxed);
        }
    }
}

pub(crate) struct ScriptStream {
    steps: std::vec::IntoIter<Step>,
    sleep: Option<Pin<Box<Sleep>>>,
    guard: StreamGuard,
}

impl ScriptStream {
    pub fn new(steps: Vec<Step>, shared: Arc<Shared>) -> Self {
        Self {
            steps: steps.into_iter(),
            sleep: None,
            guard: StreamGuard::new(shared),
        }
    }
}

impl Stream for ScriptStream {
    type Item = Result<Bytes, io::Error>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if let Some(sleep) = this.sleep.as_mut() {
                ready!(sleep.as_mut().poll(cx));
                this.sleep = None;
                if this.guard.shared.shutdown.is_cancelled() {
                    // The mock is stopping: do not keep a graceful shutdown waiting.
                    this.guard.end(Ending::Reset);
                    return Poll::Ready(Some(Err(io::Error::other("mock upstream shutting down"))));
                }
            }
            match this.steps.next() {
                Some(Step::Data(b)) => return Poll::Ready(Some(Ok(b))),
                Some(Step::Sleep(d)) => this.sleep = Some(Box::pin(tokio::time::sleep(d))),
                Some(Step::Abort) => {
                    this.guard.end(Ending::Reset);
                    return Poll::Ready(Some(Err(io::Error::new(
                        io::ErrorKind::ConnectionReset,
                        "mock upstream reset mid-stream",
                    ))));
                }
                None => {
                    this.guard.end(Ending::Completed);
                    return Poll::Ready(None);
                }
            }
        }
    }
}
