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

// An HMAC-SHA256 key prepared once (RFC 2104): SHA-256 with the padded key
// already absorbed, once for the inner and once for the outer hash, so that
// each MAC costs two copies of those states and the hashing of its own
// bytes (about 0.3 microseconds; 3 when the caches are cold, as on a
// connection's set-up, against 7 for OpenSSL's EVP_MAC, whose path through
// its providers is longer). Each mac() works on its own copies: one HmacKey
// serves several threads at once.
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

// Fills out from the system's CSPRNG (getrandom(2), drawn ahead a page at a
// time for small requests, else OpenSSL's RAND_bytes); an error when it
// cannot.
Status random_bytes(std::span<std::uint8_t> out);

// Comparison whose time does not depend on where a and b differ.
bool equal_in_constant_time(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b);

} // namespace tent
