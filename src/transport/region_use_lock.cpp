#include "transport/region_use_lock.h"

#include <algorithm>
#include <vector>

namespace tent {

namespace {
// The locks this thread holds shared (a handful at most: one per engine).
thread_local std::vector<const RegionUseLock*> t_held;
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
    return std::find(t_held.begin(), t_held.end(), this) != t_held.end();
}

RegionUseLock::Shared::Shared(const RegionUseLock* lock) {
    if (!lock || lock->held_by_this_thread()) return;
    pthread_rwlock_rdlock(&lock->lock_);
    t_held.push_back(lock);
    taken_ = lock;
}

RegionUseLock::Shared::~Shared() {
    if (!taken_) return;
    t_held.erase(std::find(t_held.begin(), t_held.end(), taken_));
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
