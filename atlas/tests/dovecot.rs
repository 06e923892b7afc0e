//! The Dovecot helper itself (`support::dovecot`): messages round-trip, a taken port is
//! detected, a wrong password is refused, two instances are separate, nothing is left behind.

use std::time::Instant;

use futures_util::TryStreamExt;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use crate::support::dovecot::*;

#[tokio::test]
async fn append_seen_and_unseen_round_trip() {
    let started = Instant::now();
    let dovecot = Dovecot::start().await;
    eprintln!("dovecot started in {:?} on port {}", started.elapsed(), dovecot.port());
    assert_eq!(
        dovecot.url(),
        format!("imap://{}:{}@127.0.0.1:{}/INBOX", dovecot.user(), dovecot.password(), dovecot.port())
    );
    assert!(dovecot.log().contains("starting up for imap"), "{}", dovecot.log());

    assert!(dovecot.seen_flags().await.is_empty());
    let mut uids = Vec::new();
    for n in 1..=3 {
        uids.push(dovecot.append(&message(n)).await);
    }
    assert_eq!(uids.len(), 3);
    assert!(uids.windows(2).all(|w| w[0] < w[1]), "UIDs grow: {uids:?}");
    assert_eq!(dovecot.seen_flags().await, uids.iter().map(|&u| (u, false)).collect::<Vec<_>>());

    // A client reading the second message marks it \Seen.
    let mut session = dovecot.session().await;
    session.select("INBOX").await.unwrap();
    let fetched: Vec<_> = session.uid_fetch(uids[1].to_string(), "BODY[]").await.unwrap().try_collect().await.unwrap();
    assert_eq!(fetched.len(), 1);
    assert!(String::from_utf8_lossy(fetched[0].body().unwrap()).contains("Subject: Test message 2"));
    session.logout().await.unwrap();
    assert_eq!(dovecot.seen_flags().await, vec![(uids[0], false), (uids[1], true), (uids[2], false)]);

    // Explicitly through STORE as well.
    let mut session = dovecot.session().await;
    session.select("INBOX").await.unwrap();
    let _: Vec<_> =
        session.uid_store(uids[2].to_string(), "+FLAGS (\\Seen)").await.unwrap().try_collect().await.unwrap();
    session.logout().await.unwrap();
    assert_eq!(dovecot.seen_flags().await, vec![(uids[0], false), (uids[1], true), (uids[2], true)]);

    dovecot.mark_all_unseen().await;
    assert_eq!(dovecot.seen_flags().await, uids.iter().map(|&u| (u, false)).collect::<Vec<_>>());

    // No service failed along the way (chroot, permissions, users).
    let log = dovecot.log();
    assert!(!log.contains("Error:") && !log.contains("Fatal:") && !log.contains("Panic:"), "{log}");
}

#[tokio::test]
async fn a_taken_port_is_detected_for_a_retry() {
    // Someone else serves IMAP on the port: dovecot cannot bind it, and its greeting is not ours.
    let other = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = other.local_addr().unwrap().port();
    let server = tokio::spawn(async move {
        loop {
            let (mut stream, _) = other.accept().await.unwrap();
            stream.write_all(b"* OK some other server ready.\r\n").await.ok();
        }
    });
    match Dovecot::try_start(port).await {
        Attempt::PortTaken(log) => {
            assert!(log.contains("some other server") || log.contains("Address already in use"), "{log}")
        }
        Attempt::Ready(dovecot) => panic!("started on a taken port; log:\n{}", dovecot.log()),
    }
    server.abort();

    // A silent listener: dovecot fails to bind and exits.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    match Dovecot::try_start(silent.local_addr().unwrap().port()).await {
        Attempt::PortTaken(log) => assert!(log.contains("Address already in use"), "{log}"),
        Attempt::Ready(dovecot) => panic!("started on a taken port; log:\n{}", dovecot.log()),
    }
}

#[tokio::test]
async fn wrong_password_is_refused() {
    let dovecot = Dovecot::start().await;
    let stream = TcpStream::connect(("127.0.0.1", dovecot.port())).await.unwrap();
    let mut client = async_imap::Client::new(stream);
    client.read_response().await.unwrap().unwrap();
    assert!(client.login(dovecot.user(), "not-the-password").await.is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_instances_run_in_parallel_and_are_separate() {
    let started = Instant::now();
    let (a, b) = tokio::join!(Dovecot::start(), Dovecot::start());
    eprintln!("two dovecots started in parallel in {:?}", started.elapsed());
    assert_ne!(a.port(), b.port());
    let (m1, m2) = (message(1), message(2));
    let (ua, ub) = tokio::join!(a.append(&m1), b.append(&m2));
    let ub2 = b.append(&message(3)).await;
    assert_eq!(a.seen_flags().await, vec![(ua, false)]);
    assert_eq!(b.seen_flags().await, vec![(ub, false), (ub2, false)]);
}

#[tokio::test]
async fn drop_leaves_no_process_behind() {
    let dovecot = Dovecot::start().await;
    // Log in once, so that login, auth and imap processes exist too.
    dovecot.append(&message(1)).await;
    let mut session = dovecot.session().await;
    session.select("INBOX").await.unwrap();

    let pgid = dovecot.child.id();
    let dir = dovecot.dir.path().to_path_buf();
    let instance = dovecot.instance.clone();
    let live = dovecot.live_processes();
    assert!(live.len() >= 4, "master and its services: {live:?}");
    // Every process of the instance carries its name in its title, the master also its config path.
    let titles = pgrep(&instance);
    assert!(titles.lines().count() >= live.len(), "{titles}\nvs {live:?}");
    assert!(pgrep(&dir.display().to_string()).contains("dovecot.conf"));

    let stopped = Instant::now();
    drop(dovecot);
    eprintln!("dovecot stopped in {:?}", stopped.elapsed());
    assert!(!dir.exists(), "temp dir removed");
    assert_eq!(live_group_members(pgid), Vec::<u32>::new());
    assert_eq!(pgrep(&dir.display().to_string()), "");
    assert_eq!(pgrep(&instance), "");
    // The open session sees the server gone.
    assert!(session.noop().await.is_err());
}
