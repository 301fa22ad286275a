// The three primitives of OpenSSL's libcrypto that tent's connection
// authentication uses (wire/auth_handshake.h), behind plain types so that
// no other file includes OpenSSL.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "common/status.h"

namespace tent {

using Mac = std::array<std::uint8_t, 32>;  // HMAC-SHA256

// HMAC-SHA256 of the concatenation of parts under key; an error (never a
// made-up MAC) when OpenSSL fails.
Result<Mac> hmac_sha256(std::span<const std::uint8_t> key, std::initializer_list<std::span<const std::uint8_t>> parts);

// Fills out from the system's CSPRNG (RAND_bytes); an error when it cannot.
Status random_bytes(std::span<std::uint8_t> out);

// Comparison whose time does not depend on where a and b differ.
bool equal_in_constant_time(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b);

} // namespace tent
