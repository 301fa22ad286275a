// Whether AddressSanitizer instruments this build (g++ -fsanitize=address).
// Code that keeps freed memory for reuse (node_spares.h, engine/op_pool.h)
// frees it instead under it: a use after free must show as one.
#pragma once

namespace tent {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif

} // namespace tent
