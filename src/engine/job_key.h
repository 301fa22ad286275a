// Where the job's key comes from (tent(7), SECURITY): the job_key knob
// (usually the TENT_JOB_KEY variable), else the file named by job_key_file,
// which is created with a fresh random key (mode 0600) on first use and
// refused when its mode lets group or others read or write it.
// job_key_file = none: the embedding program gives the key later
// (tent_engine_set_job_key). auth = false: no key, no handshake.
#pragma once

#include <memory>
#include <string>

#include "common/job_key_cell.h"
#include "common/status.h"
#include "config/config.h"

namespace tent {

// The shortest key accepted: 16 bytes.
inline constexpr std::size_t kMinJobKeyLength = 16;

Result<std::shared_ptr<JobKeyCell>> load_job_key(const Config& config);

// job_key_file's value with a leading "~/" replaced by the home directory.
std::string expand_home(const std::string& path);

} // namespace tent
