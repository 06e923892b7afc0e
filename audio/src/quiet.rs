//! alsa-lib writes its own errors on stderr (« ALSA lib confmisc.c:855:(parse_card) cannot
//! find card '0' ») before Arthur can say anything: eight lines on a machine without a
//! sound card. A thread that opens an ALSA device first catches them in a buffer
//! (alsa-rs' thread-local error handler, no unsafe code here), and [`drain`] moves what was
//! caught to the debug log.

#[cfg(target_os = "linux")]
mod imp {
    use std::cell::RefCell;
    use std::rc::Rc;

    thread_local! {
        static CAUGHT: RefCell<Option<Rc<RefCell<alsa::Output>>>> = const { RefCell::new(None) };
    }

    pub fn catch() {
        CAUGHT.with_borrow_mut(|c| {
            if c.is_none() {
                *c = alsa::Output::local_error_handler().ok();
            }
        });
    }

    pub fn drain() {
        let Some(text) = CAUGHT.with_borrow(|c| c.as_ref().map(|o| o.borrow().to_string())) else { return };
        if text.trim().is_empty() {
            return;
        }
        for line in text.lines() {
            tracing::debug!(target: "alsa", "alsa-lib: {line}");
        }
        // A fresh buffer: alsa-rs empties it by installing the handler again.
        CAUGHT.with_borrow_mut(|c| *c = alsa::Output::local_error_handler().ok());
    }
}

/// From now on, alsa-lib's messages on the calling thread are caught instead of printed.
pub fn alsa_errors_to_log() {
    #[cfg(target_os = "linux")]
    imp::catch();
}

/// Logs (debug) what alsa-lib said on this thread since the last drain.
pub fn drain() {
    #[cfg(target_os = "linux")]
    imp::drain();
}
