//! Work spread over the host's cores for the few places that have much of it and no
//! server to wait for: reading a folder of nights and searching their series
//! (`history`). A dozen lines over `std::thread::scope`, not a thread-pool crate: nothing
//! else in claimbench runs CPU-bound work in parallel.

/// `f` over `items` in their order, on up to as many threads as the host has cores.
pub fn map<T: Send, U: Send>(items: Vec<T>, f: impl Fn(T) -> U + Sync) -> Vec<U> {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let count = items.len();
    // Each thread takes the next item when it is free: items can differ in cost by
    // hundreds of times (a history's series with a real shift), so fixed shares would
    // leave a core idle.
    let items: Vec<Mutex<Option<T>>> = items.into_iter().map(|t| Mutex::new(Some(t))).collect();
    let next = AtomicUsize::new(0);
    let mut done: Vec<(usize, U)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads.min(count).max(1))
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(slot) = items.get(i) else {
                            return mine;
                        };
                        let item = slot.lock().unwrap_or_else(|p| p.into_inner()).take();
                        if let Some(item) = item {
                            mine.push((i, f(item)));
                        }
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("`f` does not panic"))
            .collect()
    });
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, u)| u).collect()
}
