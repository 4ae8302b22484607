// 8 threads serving requests that each take one static std::sync::Mutex
// and hold it 500 us; each thread times its own lock() calls. Writes
// "<total lock() ns> <acquisitions>" to argv[1].
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

static SESSIONS: Mutex<u64> = Mutex::new(0);
static START: (Mutex<bool>, Condvar) = (Mutex::new(false), Condvar::new());

#[inline(never)]
fn serve_request() -> u128 {
    let t0 = Instant::now();
    let mut g = SESSIONS.lock().unwrap();
    let waited = t0.elapsed().as_nanos();
    *g += 1;
    std::thread::sleep(Duration::from_micros(500));
    drop(g);
    waited
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let threads: usize = a[2].parse().unwrap();
    let iters: usize = a[3].parse().unwrap();
    let hs: Vec<_> = (0..threads)
        .map(|_| {
            std::thread::spawn(move || {
                let mut go = START.0.lock().unwrap();
                while !*go {
                    go = START.1.wait(go).unwrap();
                }
                drop(go);
                let mut wait = 0u128;
                for _ in 0..iters {
                    wait += serve_request();
                    std::thread::sleep(Duration::from_micros(300));
                }
                wait
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(50));
    *START.0.lock().unwrap() = true;
    START.1.notify_all();
    let total: u128 = hs.into_iter().map(|h| h.join().unwrap()).sum();
    let n = *SESSIONS.lock().unwrap();
    std::fs::write(&a[1], format!("{} {}\n", total, n)).unwrap();
}
