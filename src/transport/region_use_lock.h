// RegionUseLock: keeps a deregistration waiting while a rail moves bytes of
// registered memory. A TCP rail copies a region's bytes in the kernel, in
// sendmsg() (a read's answer, a write's data) or recv() (a write arriving),
// after it has looked the region up; a program that deregisters the region
// from another thread in between, and reuses it, would otherwise see bytes
// from the wire land in its reused memory, or send what it wrote there. An
// HCA gives the guarantee by itself: once ibv_dereg_mr() returns, no RDMA
// touches the region.
//
// Rails hold it shared (Shared) from the look-up until the bytes moved;
// deregistration takes it exclusively (Exclusive) before the region leaves
// the registry, so it waits for at most the one rail call under way, and
// every later look-up fails. Writers go first: a driver that takes it again
// and again cannot starve a deregistration. Shared is re-entrant on one
// thread (a rail's progress() may post on another rail), and Exclusive on a
// thread that holds it shared (a callback run inside a rail call) takes
// nothing: no other thread can be inside the rails then (the engine drives
// them one thread at a time).
#pragma once

#include <pthread.h>

namespace tent {

class RegionUseLock {
public:
    RegionUseLock();
    ~RegionUseLock();
    RegionUseLock(const RegionUseLock&) = delete;
    RegionUseLock& operator=(const RegionUseLock&) = delete;

    // Held shared for its lifetime; a null lock holds nothing.
    class Shared {
    public:
        explicit Shared(const RegionUseLock* lock);
        ~Shared();
        Shared(const Shared&) = delete;
        Shared& operator=(const Shared&) = delete;

    private:
        friend class RegionUseLock;
        const RegionUseLock* taken_ = nullptr;  // null: not taken here
        // The Shared taken before this one on this thread (they nest): the
        // chain says which locks the thread holds. A plain pointer, not a
        // thread_local container, because rails flush at exit, after the
        // main thread's thread_local objects are gone.
        const Shared* below_ = nullptr;
    };

    // Held exclusively for its lifetime: no rail call is moving region bytes.
    class Exclusive {
    public:
        explicit Exclusive(const RegionUseLock& lock);
        ~Exclusive();
        Exclusive(const Exclusive&) = delete;
        Exclusive& operator=(const Exclusive&) = delete;

    private:
        const RegionUseLock* taken_ = nullptr;
    };

private:
    bool held_by_this_thread() const;
    mutable pthread_rwlock_t lock_;
};

} // namespace tent
