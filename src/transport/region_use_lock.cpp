#include "transport/region_use_lock.h"

namespace tent {

namespace {
// The innermost Shared that took a lock on this thread.
thread_local const RegionUseLock::Shared* t_top = nullptr;
} // namespace

RegionUseLock::RegionUseLock() {
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&lock_, &attr);
    pthread_rwlockattr_destroy(&attr);
}

RegionUseLock::~RegionUseLock() { pthread_rwlock_destroy(&lock_); }

bool RegionUseLock::held_by_this_thread() const {
    for (const Shared* s = t_top; s; s = s->below_)
        if (s->taken_ == this) return true;
    return false;
}

RegionUseLock::Shared::Shared(const RegionUseLock* lock) {
    if (!lock || lock->held_by_this_thread()) return;
    pthread_rwlock_rdlock(&lock->lock_);
    taken_ = lock;
    below_ = t_top;
    t_top = this;
}

RegionUseLock::Shared::~Shared() {
    if (!taken_) return;
    t_top = below_;  // Shared objects are scoped, so this one is the innermost
    pthread_rwlock_unlock(&taken_->lock_);
}

RegionUseLock::Exclusive::Exclusive(const RegionUseLock& lock) {
    if (lock.held_by_this_thread()) return;
    pthread_rwlock_wrlock(&lock.lock_);
    taken_ = &lock;
}

RegionUseLock::Exclusive::~Exclusive() {
    if (taken_) pthread_rwlock_unlock(&taken_->lock_);
}

} // namespace tent
