//! Panics caught at the edges of request handling. There should be none; if one happens, the
//! request gets an internal error instead of a dropped connection, and the service goes on.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};

/// A future whose panics become `Err(())`.
pub struct CatchPanic<F>(Pin<Box<F>>);

impl<F: Future> CatchPanic<F> {
    /// Wraps `future`.
    pub fn new(future: F) -> CatchPanic<F> {
        CatchPanic(Box::pin(future))
    }
}

impl<F: Future> Future for CatchPanic<F> {
    type Output = Result<F::Output, ()>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = self.0.as_mut();
        match catch_unwind(AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(Poll::Ready(value)) => Poll::Ready(Ok(value)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(_) => Poll::Ready(Err(())),
        }
    }
}
