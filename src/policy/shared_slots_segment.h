// The shared-memory segment behind cross-process priority slots: a header
// every process on the node maps, holding the common slot epoch and interval,
// a robust process-shared mutex and the table of attached processes.
//
// First initialisation is race-free: whoever wins shm_open(O_CREAT|O_EXCL)
// initialises the header and then publishes state=ready with a release store;
// everyone else waits (bounded) for ready and validates magic, version and
// size, so a foreign, older or half-initialised segment is a clear error
// naming the segment, never a crash or a hang.
//
// A process killed while holding the mutex does not wedge the others: the
// next locker gets EOWNERDEAD, repairs the table and marks the mutex
// consistent (the anchor never handled this).
//
// Each attached process also publishes, in its row of `pending`, how many
// requests of each priority it has (queued or in flight), so that a slot's
// lower priorities may run when no process has higher-priority work
// (work-conserving slots). Rows are written by their owner alone, with
// relaxed atomic stores and no lock; a dead owner's row is cleared when the
// table is repaired.
#pragma once

#include <pthread.h>
#include <sys/types.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "common/clock.h"
#include "common/status.h"

namespace tent {

inline constexpr std::uint64_t kQuotaMagic = 0x544f5551544e4554ULL;  // "TENTQUOT" in memory order
inline constexpr std::uint32_t kQuotaVersion = 2;  // 2: per-process pending counts
inline constexpr std::uint32_t kQuotaReady = 0x59444552;  // "REDY": unlikely in garbage
inline constexpr std::size_t kQuotaMaxParticipants = 1024;
inline constexpr std::size_t kQuotaLevels = 3;  // high, medium, low

// The layout of version 2. The first four fields keep their offsets in every
// version so that any version can tell what it is looking at.
struct QuotaHeader {
    std::atomic<std::uint64_t> magic;  // written (release) after version and size
    std::uint32_t version;
    std::atomic<std::uint32_t> state;  // kQuotaReady once fully initialised
    std::uint64_t size;                // sizeof(QuotaHeader) of the writer
    std::int64_t creator_pid;
    // Written under the mutex only while no live process is attached (at
    // creation, or when reusing a segment whose users were all killed), so
    // constant for as long as anyone uses them.
    std::int64_t epoch_ns;     // steady clock (CLOCK_MONOTONIC) start of a slot 0
    std::int64_t interval_ns;  // slot length
    pthread_mutex_t mutex;     // robust, process-shared
    // Guarded by mutex.
    std::uint32_t retired;     // set by the last process to detach, which unlinks the name
    std::uint32_t participant_count;
    std::uint64_t recoveries;  // times a dead owner's mutex was recovered
    std::int32_t participants[kQuotaMaxParticipants];  // attached pids, 0 = free
    // Not guarded: rows below it may be in use (raised under the mutex).
    std::atomic<std::uint32_t> rows_used;
    // pending[i][level]: requests of that level process participants[i] has.
    std::atomic<std::uint32_t> pending[kQuotaMaxParticipants][kQuotaLevels];
};

static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
static_assert(std::atomic<std::uint32_t>::is_always_lock_free);

// Size of the version-independent prefix (magic, version, state, size).
inline constexpr std::size_t kQuotaPrefixSize = 24;

// --- Participant table: pure functions over the header's guarded part. ---

// Adds pid; false when the table is full.
bool participants_add(QuotaHeader& h, pid_t pid);
// Same, returning the row taken (-1: full); a process may hold several
// (one per engine).
int participants_add_row(QuotaHeader& h, pid_t pid);
// The row of pid, or -1.
int participant_row(const QuotaHeader& h, pid_t pid);
// True when some process has a request of a level above `level` (0 high).
bool higher_pending(const QuotaHeader& h, int level);
// Removes one entry for pid; false when absent.
bool participants_remove(QuotaHeader& h, pid_t pid);
// Drops entries whose process is gone and recounts; returns entries dropped.
std::size_t participants_repair(QuotaHeader& h, const std::function<bool(pid_t)>& alive);
// kill(pid, 0) says it exists (or we may not signal it).
bool process_alive(pid_t pid);

// Holds the segment's mutex; unlocks when destroyed.
class QuotaLock {
public:
    QuotaLock() = default;
    QuotaLock(QuotaLock&& other) noexcept;
    QuotaLock& operator=(QuotaLock&& other) noexcept;
    QuotaLock(const QuotaLock&) = delete;
    QuotaLock& operator=(const QuotaLock&) = delete;
    ~QuotaLock();

    // True when this lock took over from a process that died holding it.
    bool recovered() const { return recovered_; }
    QuotaHeader& header() { return *header_; }

private:
    friend class QuotaSegment;
    QuotaLock(QuotaHeader* h, bool recovered) : header_(h), recovered_(recovered) {}
    QuotaHeader* header_ = nullptr;
    bool recovered_ = false;
};

struct QuotaSegmentOptions {
    std::string name;                           // POSIX shm name, "/tent-quota"
    Duration interval{2'000'000};               // used only by the creator
    Duration ready_timeout{1'000'000'000};      // wait for another creator's initialisation
    Duration lock_timeout{1'000'000'000};       // never wait forever for the mutex
};

class QuotaSegment {
public:
    // Creates or attaches to the segment and registers this process in it.
    // `clock` gives the epoch when this call creates the segment.
    static Result<std::unique_ptr<QuotaSegment>> open(const QuotaSegmentOptions& options,
                                                      const Clock& clock);
    // Unregisters; the last process to leave removes the name.
    ~QuotaSegment();
    QuotaSegment(const QuotaSegment&) = delete;
    QuotaSegment& operator=(const QuotaSegment&) = delete;

    // Takes the mutex, recovering it from a dead owner if needed.
    Result<QuotaLock> lock();

    // Publishes this process's pending requests by level (no lock, no
    // system call; nothing when it is not in the table).
    void publish_pending(const std::array<std::uint32_t, kQuotaLevels>& counts);
    bool higher_pending(int level) const { return tent::higher_pending(*header_, level); }
    // Clears the rows of processes that are gone (takes the mutex).
    Status repair();

    bool created() const { return created_; }
    const std::string& name() const { return name_; }
    TimePoint epoch() const;
    Duration interval() const;
    const QuotaHeader& header() const { return *header_; }

    // Construction goes through open(); the key keeps it that way.
    struct Key {
    private:
        friend class QuotaSegment;
        Key() = default;
    };
    QuotaSegment(Key, std::string name, int fd, QuotaHeader* header, bool created,
                 Duration lock_timeout);

private:
    void detach();

    std::string name_;
    int fd_ = -1;
    QuotaHeader* header_ = nullptr;
    bool created_ = false;
    pid_t registered_pid_ = 0;  // 0 = not in the table (a forked child never is)
    int row_ = -1;              // this process's row of pending, -1 = none
    Duration lock_timeout_;
};

// "/dev/shm/NAME" for messages telling the user what to remove.
std::string shm_file_for(const std::string& name);
// Status(InvalidArgument) unless name is "/" followed by 1..254 chars without '/'.
Status validate_shm_name(const std::string& name);

} // namespace tent
