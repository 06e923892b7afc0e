//! Where Arthur says what he says on his own (a due reminder, a timer's bell) when he has
//! several places to speak: the local loudspeaker and satellites. It is said where the user
//! last spoke to him, if that place is still there; else on the local loudspeaker; else on
//! every satellite connected — a reminder said nowhere is a reminder missed.

use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// One place Arthur speaks.
pub type PlaceId = usize;

struct Place<T> {
    tx: mpsc::Sender<T>,
    /// Whether it can be heard now (a satellite that is connected).
    alive: Box<dyn Fn() -> bool + Send + Sync>,
    local: bool,
    name: String,
}

/// The places and where the user last spoke.
pub struct Announcer<T> {
    places: Mutex<(Vec<Place<T>>, Option<PlaceId>)>,
}

impl<T: Clone + Send + 'static> Default for Announcer<T> {
    fn default() -> Self {
        Self { places: Mutex::new((Vec::new(), None)) }
    }
}

impl<T: Clone + Send + 'static> Announcer<T> {
    /// A place: its announcement queue (the voice loop's), and how to tell it can be heard.
    pub fn add(
        &self,
        name: &str,
        tx: mpsc::Sender<T>,
        local: bool,
        alive: impl Fn() -> bool + Send + Sync + 'static,
    ) -> PlaceId {
        let mut guard = self.places.lock().unwrap_or_else(|p| p.into_inner());
        guard.0.push(Place { tx, alive: Box::new(alive), local, name: name.to_string() });
        guard.0.len() - 1
    }

    /// The user spoke to Arthur at `place`.
    pub fn spoke(&self, place: PlaceId) {
        self.places.lock().unwrap_or_else(|p| p.into_inner()).1 = Some(place);
    }

    /// Says `item` where it should be heard; returns the places it went to.
    pub fn route(&self, item: T) -> Vec<PlaceId> {
        let guard = self.places.lock().unwrap_or_else(|p| p.into_inner());
        let (places, last) = &*guard;
        let alive = |i: &PlaceId| (places[*i].alive)();
        let mut targets: Vec<PlaceId> = last.iter().copied().filter(alive).collect();
        if targets.is_empty() {
            targets = (0..places.len()).filter(|i| places[*i].local && alive(i)).collect();
        }
        if targets.is_empty() {
            targets = (0..places.len()).filter(alive).collect();
        }
        targets.retain(|i| match places[*i].tx.try_send(item.clone()) {
            Ok(()) => true,
            Err(_) => {
                tracing::warn!(place = %places[*i].name, "voice busy or stopped: announcement not said there");
                false
            }
        });
        targets
    }
}

/// Routes everything that arrives on `rx` until `shutdown` (or until every sender is gone).
pub async fn run<T: Clone + Send + 'static>(
    announcer: Arc<Announcer<T>>,
    mut rx: mpsc::Receiver<T>,
    shutdown: CancellationToken,
) {
    loop {
        tokio::select! {
            item = rx.recv() => match item {
                Some(item) => {
                    if announcer.route(item).is_empty() {
                        tracing::warn!("no voice to say an announcement: shown on the web only");
                    }
                }
                None => return,
            },
            () = shutdown.cancelled() => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    #[test]
    fn said_where_the_user_last_spoke_else_locally_else_on_every_satellite() {
        let a = Announcer::<&'static str>::default();
        let (local_tx, mut local) = mpsc::channel(8);
        let (k_tx, mut kitchen) = mpsc::channel(8);
        let (b_tx, mut bedroom) = mpsc::channel(8);
        let kitchen_up = Arc::new(AtomicBool::new(true));
        let up = kitchen_up.clone();
        let l = a.add("local", local_tx, true, || true);
        let k = a.add("kitchen", k_tx, false, move || up.load(Ordering::Relaxed));
        let b = a.add("bedroom", b_tx, false, || true);
        assert_eq!(a.route("first"), [l], "nobody spoke yet: the local loudspeaker");
        a.spoke(k);
        assert_eq!(a.route("timer"), [k], "where the user spoke");
        assert_eq!(kitchen.try_recv().unwrap(), "timer");
        kitchen_up.store(false, Ordering::Relaxed);
        assert_eq!(a.route("reminder"), [l], "the kitchen is gone: locally");
        assert_eq!(local.try_recv().unwrap(), "first");
        assert_eq!(local.try_recv().unwrap(), "reminder");

        let only_satellites = Announcer::<u8>::default();
        let (x_tx, mut x) = mpsc::channel(8);
        let (y_tx, mut y) = mpsc::channel(8);
        only_satellites.add("x", x_tx, false, || true);
        only_satellites.add("y", y_tx, false, || true);
        assert_eq!(only_satellites.route(7), [0, 1], "no local voice, nobody spoke: every satellite");
        assert_eq!((x.try_recv().unwrap(), y.try_recv().unwrap()), (7, 7));
        assert!(bedroom.try_recv().is_err());
        let _ = b;
    }
}
