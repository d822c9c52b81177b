//! The store thread: the one scratchpad connection of the service, off the async threads.
//! Requests send it closures and await their answers; between jobs it watches the store for
//! changes made by other processes (local agents moving tasks through `agent-intercom pad` or
//! the Node API), so that blocking sends wake up without polling their tasks.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use agent_intercom_core::{Error, ErrorCode};
use agent_intercom_scratchpad::Store;
use tokio::sync::{oneshot, watch};

/// How often the store thread looks for changes made by other processes when it is idle.
const WATCH_INTERVAL: Duration = Duration::from_millis(20);

type Job = Box<dyn FnOnce(&mut Store) + Send>;

/// A handle on the store thread (cheap to clone).
#[derive(Clone)]
pub struct StoreHandle {
    jobs: mpsc::Sender<Job>,
    changes: watch::Receiver<u64>,
}

/// The store thread, joined when dropped (after every handle is gone).
pub struct Worker {
    handle: StoreHandle,
    thread: Option<JoinHandle<()>>,
}

impl Worker {
    /// Moves `store` to a thread of its own.
    pub fn start(store: Store) -> Result<Worker, Error> {
        let (jobs, queue) = mpsc::channel::<Job>();
        let (notify, changes) = watch::channel(0u64);
        let thread = std::thread::Builder::new()
            .name("a2a-store".into())
            .spawn(move || run(store, &queue, &notify))
            .map_err(|e| {
                Error::new(
                    ErrorCode::Internal,
                    format!("cannot start the store thread: {e}"),
                )
            })?;
        Ok(Worker {
            handle: StoreHandle { jobs, changes },
            thread: Some(thread),
        })
    }

    /// A handle for requests.
    pub fn handle(&self) -> StoreHandle {
        self.handle.clone()
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // The thread ends once every sender (ours and the requests' clones) is gone: ours is
        // swapped for one that leads nowhere.
        drop(std::mem::replace(&mut self.handle.jobs, mpsc::channel().0));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn run(mut store: Store, queue: &mpsc::Receiver<Job>, notify: &watch::Sender<u64>) {
    let mut seen = store.change_marker().ok();
    loop {
        match queue.recv_timeout(WATCH_INTERVAL) {
            Ok(job) => job(&mut store),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return,
        }
        let now = store.change_marker().ok();
        if now != seen {
            seen = now;
            notify.send_modify(|n| *n = n.wrapping_add(1));
        }
    }
}

impl StoreHandle {
    /// Runs `f` on the store thread and returns its answer. A panic in `f` (there should be
    /// none) is caught and answered as `INTERNAL`; the store stays usable (an open transaction
    /// is rolled back when it is dropped).
    pub async fn call<R, F>(&self, f: F) -> Result<R, Error>
    where
        R: Send + 'static,
        F: FnOnce(&mut Store) -> Result<R, Error> + Send + 'static,
    {
        let (tx, rx) = oneshot::channel();
        let job: Job = Box::new(move |store| {
            let answer = catch_unwind(AssertUnwindSafe(|| f(store))).unwrap_or_else(|_| {
                Err(Error::new(
                    ErrorCode::Internal,
                    "the store operation failed unexpectedly (a panic, caught)",
                ))
            });
            let _ = tx.send(answer);
        });
        self.jobs
            .send(job)
            .map_err(|_| Error::new(ErrorCode::Internal, "the store thread has stopped"))?;
        rx.await
            .map_err(|_| Error::new(ErrorCode::Internal, "the store thread has stopped"))?
    }

    /// A receiver that is told whenever the store changed.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.changes.clone()
    }
}
