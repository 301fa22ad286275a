// The job's key as the running engine holds it, shared by the engine (the
// control listener and connects) and the TCP provider (rail sockets), and
// replaceable while they run: the Open MPI component learns the job's key
// from the modex only after the engine exists (tent_engine_set_job_key).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace tent {

using JobKey = std::vector<std::uint8_t>;

class JobKeyCell {
public:
    // auth = false: no handshake at all (both sides must agree).
    static std::shared_ptr<JobKeyCell> off() { return std::shared_ptr<JobKeyCell>(new JobKeyCell(false, {})); }
    // The key now, or (nullopt) given later with set().
    static std::shared_ptr<JobKeyCell> with(std::optional<JobKey> key) {
        return std::shared_ptr<JobKeyCell>(new JobKeyCell(true, std::move(key)));
    }

    bool required() const { return required_; }
    // nullopt while the key is not known yet.
    std::optional<JobKey> get() const {
        std::lock_guard lock(mutex_);
        return key_;
    }
    void set(JobKey key) {
        std::lock_guard lock(mutex_);
        key_ = std::move(key);
    }

private:
    JobKeyCell(bool required, std::optional<JobKey> key) : required_(required), key_(std::move(key)) {}
    const bool required_;
    mutable std::mutex mutex_;
    std::optional<JobKey> key_;
};

} // namespace tent
