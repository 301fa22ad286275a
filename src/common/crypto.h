// The primitives tent's connection authentication uses
// (wire/auth_handshake.h): HMAC-SHA256 and constant-time comparison from
// OpenSSL's libcrypto, random bytes from the kernel's CSPRNG, behind plain
// types so that no other file includes OpenSSL.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "common/status.h"

namespace tent {

using Mac = std::array<std::uint8_t, 32>;  // HMAC-SHA256

// An HMAC-SHA256 key prepared once: OpenSSL's MAC context with the key
// already set, so that each MAC costs a copy of that context (about half a
// microsecond) instead of a fetch of the algorithm and the key's own hashing
// (about three). Each mac() works on its own copy: one HmacKey serves
// several threads at once.
class HmacKey {
public:
    explicit HmacKey(std::span<const std::uint8_t> key);
    ~HmacKey();
    HmacKey(const HmacKey&) = delete;
    HmacKey& operator=(const HmacKey&) = delete;

    // HMAC-SHA256 of the concatenation of parts; an error (never a made-up
    // MAC) when OpenSSL fails.
    Result<Mac> mac(std::initializer_list<std::span<const std::uint8_t>> parts) const;

private:
    struct Prepared;
    std::unique_ptr<Prepared> prepared_;  // null when OpenSSL could not prepare it: one-shot HMAC() then
    std::vector<std::uint8_t> key_;
};

// Fills out from the system's CSPRNG (getrandom(2), else OpenSSL's
// RAND_bytes); an error when it cannot.
Status random_bytes(std::span<std::uint8_t> out);

// Comparison whose time does not depend on where a and b differ.
bool equal_in_constant_time(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b);

} // namespace tent
