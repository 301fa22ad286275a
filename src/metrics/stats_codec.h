// The byte format of a MetricsSnapshot inside a stats segment. Decoding
// checks every length against the buffer, so a damaged or foreign buffer is
// an error, never an out-of-bounds read.
//
//   u32 family count
//   per family: u8 type, str name, str help, u8 label count, str label name...,
//               u32 sample count, per sample: str label value..., f64 value
//   str = u16 length + bytes; numbers in host byte order (same machine)
#pragma once

#include <cstddef>
#include <string>

#include "common/status.h"
#include "metrics/snapshot.h"

namespace tent {

struct EncodedStats {
    std::string bytes;
    bool truncated = false;  // samples that did not fit in max_bytes were left out
};

// Encodes at most max_bytes; whatever does not fit (whole samples, then whole
// families) is dropped and reported as truncated. Strings longer than 65535
// bytes are cut.
EncodedStats encode_stats(const MetricsSnapshot& snapshot, std::size_t max_bytes);

Result<MetricsSnapshot> decode_stats(const void* data, std::size_t size);

} // namespace tent
