// The per-process stats segment: a POSIX shared-memory object into which a
// process publishes snapshots of its metrics, and from which another process
// (a monitoring tool) reads them at any time.
//
// Consistency without locks the writer could be killed holding: a seqlock.
// The writer makes the sequence odd, rewrites the data, and makes it even
// again; a reader copies the data between two reads of the same even
// sequence, retrying otherwise, so every snapshot it returns was published
// whole by one publish() — never half of one and half of the next.
//
//   auto seg = StatsSegment::create("/tent-stats-4242");   // writer
//   (*seg)->publish(registry);
//   auto r = StatsSegment::read("/tent-stats-4242");       // any process
//   if (r) puts(render_prometheus(r->metrics).c_str());
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "metrics/process_stats.h"
#include "metrics/snapshot.h"

namespace tent {

class Registry;

inline constexpr std::uint64_t kStatsMagic = 0x54415453544e4554ULL;  // "TENTSTAT" in memory order
// 2: the data area starts with the process's rail table (process_stats.h).
// A reader refuses any other version rather than misreading it.
inline constexpr std::uint32_t kStatsVersion = 2;
inline constexpr std::uint32_t kStatsReady = 0x59444552;            // "REDY"
inline constexpr std::size_t kStatsDefaultCapacity = 256 * 1024;

// The header (unchanged since version 1); the data area (capacity bytes)
// follows it: u32 length of the process stats, the process stats, the metrics.
struct StatsHeader {
    std::atomic<std::uint64_t> magic;
    std::uint32_t version;
    std::atomic<std::uint32_t> state;
    std::uint64_t size;       // whole segment
    std::int64_t pid;         // writer
    std::uint64_t capacity;   // data area bytes
    std::atomic<std::uint64_t> sequence;  // odd while the writer updates
    // Guarded by the sequence; accessed as relaxed atomic words.
    std::uint64_t publish_count;
    std::int64_t publish_time_ns;  // wall clock (CLOCK_REALTIME) of the last publish
    std::uint64_t used_bytes;
    std::uint64_t truncated;
};
static_assert(sizeof(StatsHeader) % 8 == 0, "the data area must be word aligned");

// What a reader gets: one whole published snapshot.
struct StatsReading {
    std::int64_t pid = 0;
    std::uint64_t publish_count = 0;  // 0: nothing published since creation
    std::int64_t publish_time_ns = 0;
    bool truncated = false;           // the writer had more series than fit
    ProcessStats process;
    MetricsSnapshot metrics;
};

class StatsSegment {
public:
    // Creates the segment (mode 0644: readable by monitoring tools). A
    // leftover segment of a dead process is replaced; one that a live process
    // still writes is AlreadyExists.
    static Result<std::unique_ptr<StatsSegment>> create(const std::string& name,
                                                        std::size_t capacity = kStatsDefaultCapacity);
    // Reads a consistent snapshot of any process's segment. NotFound when it
    // does not exist; InvalidArgument when it is not a tent stats segment;
    // Busy when the writer never paused long enough within `timeout`.
    static Result<StatsReading> read(const std::string& name,
                                     Duration timeout = std::chrono::milliseconds(200));

    // Names of the segments "<prefix>-<pid>" that exist now, by pid: what
    // a monitoring tool lists. Empty when there are none (or no /dev/shm).
    static std::vector<std::string> list(const std::string& prefix);

    // Removes the segment (only in the process that created it: a forked
    // child leaves its parent's segment alone).
    ~StatsSegment();
    StatsSegment(const StatsSegment&) = delete;
    StatsSegment& operator=(const StatsSegment&) = delete;

    // Replaces the published snapshot. Thread-safe; one writer at a time.
    Status publish(const MetricsSnapshot& snapshot, const ProcessStats& process = {});
    Status publish(const Registry& registry, const ProcessStats& process = {});

    const std::string& name() const { return name_; }
    std::size_t capacity() const { return capacity_; }

    struct Key {
    private:
        friend class StatsSegment;
        Key() = default;
    };
    StatsSegment(Key, std::string name, int fd, void* base, std::size_t size, std::size_t capacity);

private:
    StatsHeader* header() const { return static_cast<StatsHeader*>(base_); }
    std::uint64_t* data_words() const;

    std::string name_;
    int fd_ = -1;
    void* base_ = nullptr;
    std::size_t size_ = 0;
    std::size_t capacity_ = 0;
    pid_t owner_ = 0;
    std::mutex publish_mutex_;
    bool warned_truncated_ = false;
};

} // namespace tent
