// Random bytes drawn ahead from the kernel's CSPRNG, a page at a time, and
// handed out a few dozen at a time: the nonces and rail tokens of every
// connection's set-up would otherwise cost a getrandom() each, and a system
// call costs one to two microseconds on the virtual machines jobs run on,
// against the few dozen nanoseconds of a copy from here.
//
// Bytes handed out are wiped from the reserve, so it only ever holds bytes
// nobody has seen; it is left out of core dumps (MADV_DONTDUMP) and wiped
// in a forked child (MADV_WIPEONFORK), which then draws its own instead of
// repeating its parent's. Where the kernel cannot do that, nothing is
// reserved and every draw goes to the kernel.
#pragma once

#include <cstdint>
#include <span>

namespace tent {

// Fills out from the reserve, refilling it when it runs short; false when
// out is too large for it (over 256 bytes) or no reserve could be made or
// filled: the caller then asks the kernel itself.
bool take_reserved_random(std::span<std::uint8_t> out);

} // namespace tent
