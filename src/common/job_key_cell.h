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

#include "common/crypto.h"

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
    // The key prepared for HMAC once (common/crypto.h), null while not known yet.
    std::shared_ptr<const HmacKey> mac_key() const {
        std::lock_guard lock(mutex_);
        return mac_key_;
    }
    void set(JobKey key) {
        auto prepared = std::make_shared<const HmacKey>(key);
        std::lock_guard lock(mutex_);
        key_ = std::move(key);
        mac_key_ = std::move(prepared);
    }

private:
    JobKeyCell(bool required, std::optional<JobKey> key) : required_(required), key_(std::move(key)) {
        if (required_ && key_) mac_key_ = std::make_shared<const HmacKey>(*key_);
    }
    const bool required_;
    mutable std::mutex mutex_;
    std::optional<JobKey> key_;
    std::shared_ptr<const HmacKey> mac_key_;
};

} // namespace tent
