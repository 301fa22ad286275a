#include "metrics/stats_segment.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "common/log.h"
#include "metrics/registry.h"
#include "metrics/stats_codec.h"

namespace tent {
namespace {

constexpr std::size_t kWord = sizeof(std::uint64_t);

std::size_t round_up_words(std::size_t bytes) { return (bytes + kWord - 1) / kWord; }

// The guarded fields and the data are only ever touched as relaxed atomic
// words: the seqlock decides which copies are valid, and no access is a data race.
std::uint64_t load_word(const std::uint64_t* p) {
    return std::atomic_ref<std::uint64_t>(*const_cast<std::uint64_t*>(p)).load(std::memory_order_relaxed);
}
void store_word(std::uint64_t* p, std::uint64_t v) {
    std::atomic_ref<std::uint64_t>(*p).store(v, std::memory_order_relaxed);
}
std::uint64_t load_field(const std::int64_t* p) {
    return load_word(reinterpret_cast<const std::uint64_t*>(p));
}

Status check_name(const std::string& name) {
    if (name.size() < 2 || name.size() > 255 || name[0] != '/' ||
        name.find('/', 1) != std::string::npos)
        return Status(Code::InvalidArgument, "'" + name +
                                                 "' is not a POSIX shared-memory name (expected '/' "
                                                 "and 1-254 characters without '/')");
    return Status::ok();
}

// A read-only view of someone's segment, unmapped and closed when dropped.
struct View {
    int fd = -1;
    void* base = nullptr;
    std::size_t size = 0;
    View() = default;
    View(const View&) = delete;
    View& operator=(const View&) = delete;
    ~View() {
        if (base) ::munmap(base, size);
        if (fd >= 0) ::close(fd);
    }
    const StatsHeader* header() const { return static_cast<const StatsHeader*>(base); }
};

// Maps and validates `name`. Busy while its writer is still initialising it.
Status open_view(const std::string& name, View& v) {
    if (Status s = check_name(name); !s) return s;
    v.fd = ::shm_open(name.c_str(), O_RDONLY | O_CLOEXEC, 0);
    if (v.fd < 0) {
        if (errno == ENOENT) return Status(Code::NotFound, name + ": no such stats segment");
        return Status::from_errno(errno, name + ": cannot open stats segment");
    }
    struct stat st;
    if (::fstat(v.fd, &st) != 0) return Status::from_errno(errno, name + ": cannot stat stats segment");
    v.size = static_cast<std::size_t>(st.st_size);
    if (v.size == 0) return Status(Code::Busy, name + ": stats segment not initialised yet");
    if (v.size < sizeof(StatsHeader))
        return Status(Code::InvalidArgument, name + ": not a tent stats segment (only " +
                                                 std::to_string(v.size) + " bytes)");
    v.base = ::mmap(nullptr, v.size, PROT_READ, MAP_SHARED, v.fd, 0);
    if (v.base == MAP_FAILED) {
        v.base = nullptr;
        return Status::from_errno(errno, name + ": cannot map stats segment");
    }
    const StatsHeader* h = v.header();
    const std::uint64_t magic = h->magic.load(std::memory_order_acquire);
    if (magic == 0) return Status(Code::Busy, name + ": stats segment not initialised yet");
    if (magic != kStatsMagic)
        return Status(Code::InvalidArgument, name + ": not a tent stats segment (bad magic)");
    if (h->version != kStatsVersion)
        return Status(Code::InvalidArgument, name + ": stats segment version " +
                                                 std::to_string(h->version) + ", expected " +
                                                 std::to_string(kStatsVersion));
    if (h->state.load(std::memory_order_acquire) != kStatsReady)
        return Status(Code::Busy, name + ": stats segment not initialised yet");
    if (h->size != v.size || h->capacity + sizeof(StatsHeader) != v.size)
        return Status(Code::InvalidArgument, name + ": corrupt stats segment (size " +
                                                 std::to_string(v.size) + ")");
    return Status::ok();
}

// The segments this process created and still has: a second engine of the
// process must not take over the first one's (its pid is ours, so the
// header alone cannot tell it from a dead process's leftover).
std::mutex g_ours_mutex;
// Never freed: an engine destroyed at the process's exit, by a handler
// registered before this list was first used (the interposer's), runs
// after the list's destructor would have.
std::vector<std::string>& ours() {
    static auto* names = new std::vector<std::string>;
    return *names;
}
bool is_ours(const std::string& name) {
    std::lock_guard lock(g_ours_mutex);
    return std::find(ours().begin(), ours().end(), name) != ours().end();
}

// Another live process's segment, or another of this process's, must not be taken over.
Status check_replaceable(const std::string& name) {
    if (is_ours(name)) return Status(Code::AlreadyExists, name + ": stats segment in use by this process");
    View v;
    Status s = open_view(name, v);
    if (s.is_ok()) {
        const auto pid = static_cast<pid_t>(v.header()->pid);
        if (pid > 0 && pid != ::getpid() && (::kill(pid, 0) == 0 || errno == EPERM))
            return Status(Code::AlreadyExists,
                          name + ": stats segment in use by pid " + std::to_string(pid));
    }
    return Status::ok();  // ours, dead, half-made or foreign: replace it
}

// The data area: u32 table length, the process stats, the metrics.
Status decode_data(const void* data, std::size_t used, StatsReading& r) {
    std::uint32_t table_size = 0;
    if (used < sizeof table_size) return Status(Code::InvalidArgument, "corrupt stats data: no process stats");
    std::memcpy(&table_size, data, sizeof table_size);
    const auto* p = static_cast<const char*>(data) + sizeof table_size;
    const std::size_t left = used - sizeof table_size;
    if (table_size > left) return Status(Code::InvalidArgument, "corrupt stats data: process stats exceed data");
    std::size_t table_used = 0;
    auto process = decode_process_stats(p, table_size, &table_used);
    if (!process) return process.status();
    if (table_used != table_size) return Status(Code::InvalidArgument, "corrupt stats data: process stats length");
    auto metrics = decode_stats(p + table_size, left - table_size);
    if (!metrics) return metrics.status();
    r.process = std::move(*process);
    r.metrics = std::move(*metrics);
    return Status::ok();
}

std::int64_t wall_clock_ns() {
    struct timespec ts;
    ::clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

} // namespace

StatsSegment::StatsSegment(Key, std::string name, int fd, void* base, std::size_t size,
                           std::size_t capacity)
    : name_(std::move(name)), fd_(fd), base_(base), size_(size), capacity_(capacity),
      owner_(::getpid()) {}

std::uint64_t* StatsSegment::data_words() const {
    return reinterpret_cast<std::uint64_t*>(static_cast<char*>(base_) + sizeof(StatsHeader));
}

Result<std::unique_ptr<StatsSegment>> StatsSegment::create(const std::string& name,
                                                           std::size_t capacity) {
    if (Status s = check_name(name); !s) return s;
    if (is_ours(name)) return Status(Code::AlreadyExists, name + ": stats segment in use by this process");
    capacity = round_up_words(std::max<std::size_t>(capacity, 64)) * kWord;
    const std::size_t size = sizeof(StatsHeader) + capacity;

    int fd = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && errno == EEXIST) {
        if (Status s = check_replaceable(name); !s) return s;
        TENT_INFO("stats segment replaced", "%s: replacing a leftover stats segment", name.c_str());
        ::shm_unlink(name.c_str());
        fd = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    }
    if (fd < 0) return Status::from_errno(errno, name + ": cannot create stats segment");
    // fchmod: the umask must not hide the segment from monitoring tools.
    (void)::fchmod(fd, 0644);
    void* base = MAP_FAILED;
    if (::ftruncate(fd, static_cast<off_t>(size)) == 0)
        base = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        Status s = Status::from_errno(errno, name + ": cannot size or map stats segment");
        ::close(fd);
        ::shm_unlink(name.c_str());
        return s;
    }
    auto* h = static_cast<StatsHeader*>(base);  // zero-filled by ftruncate
    h->version = kStatsVersion;
    h->size = size;
    h->pid = ::getpid();
    h->capacity = capacity;
    h->magic.store(kStatsMagic, std::memory_order_release);
    auto seg = std::make_unique<StatsSegment>(Key{}, name, fd, base, size, capacity);
    {
        std::lock_guard lock(g_ours_mutex);
        ours().push_back(name);
    }
    // An empty snapshot, so readers never see undecodable data.
    if (Status s = seg->publish(MetricsSnapshot{}); !s) return s;
    store_word(&h->publish_count, 0);
    h->state.store(kStatsReady, std::memory_order_release);
    return seg;
}

std::vector<std::string> StatsSegment::list(const std::string& prefix) {
    std::vector<std::pair<long long, std::string>> found;
    if (check_name(prefix).is_ok()) {
        const std::string stem = prefix.substr(1) + "-";
        if (DIR* dir = ::opendir("/dev/shm")) {
            while (const struct dirent* e = ::readdir(dir)) {
                std::string_view entry(e->d_name);
                if (!entry.starts_with(stem) || entry.size() == stem.size()) continue;
                std::string_view digits = entry.substr(stem.size());
                if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
                    digits.size() > 12)
                    continue;
                found.emplace_back(std::stoll(std::string(digits)), "/" + std::string(entry));
            }
            ::closedir(dir);
        }
    }
    std::sort(found.begin(), found.end());
    std::vector<std::string> names;
    for (auto& f : found) names.push_back(std::move(f.second));
    return names;
}

StatsSegment::~StatsSegment() {
    {
        std::lock_guard lock(g_ours_mutex);
        auto it = std::find(ours().begin(), ours().end(), name_);
        if (it != ours().end()) ours().erase(it);
    }
    if (owner_ == ::getpid()) ::shm_unlink(name_.c_str());
    if (base_) ::munmap(base_, size_);
    if (fd_ >= 0) ::close(fd_);
}

Status StatsSegment::publish(const Registry& registry, const ProcessStats& process) {
    return publish(registry.snapshot(), process);
}

Status StatsSegment::publish(const MetricsSnapshot& snapshot, const ProcessStats& process) {
    if (owner_ != ::getpid())
        return Status(Code::InvalidArgument, name_ + ": stats segment belongs to pid " +
                                                 std::to_string(owner_) + " (create one per process)");
    EncodedStats enc;
    std::string table = encode_process_stats(process);
    if (table.size() + sizeof(std::uint32_t) > capacity_ / 2) {
        table = encode_process_stats(ProcessStats{process.program, process.peers, {}});  // rails left out
        enc.truncated = true;
    }
    const auto table_size = static_cast<std::uint32_t>(table.size());
    enc.bytes.append(reinterpret_cast<const char*>(&table_size), sizeof table_size);
    enc.bytes += table;
    EncodedStats metrics = encode_stats(snapshot, capacity_ - enc.bytes.size());
    enc.bytes += metrics.bytes;
    enc.truncated = enc.truncated || metrics.truncated;
    std::vector<std::uint64_t> words(round_up_words(enc.bytes.size()), 0);
    std::memcpy(words.data(), enc.bytes.data(), enc.bytes.size());

    std::lock_guard lock(publish_mutex_);
    if (enc.truncated && !warned_truncated_) {
        warned_truncated_ = true;
        TENT_WARN("stats segment full",
                  "%s: metrics need more than %zu bytes; publishing the series that fit",
                  name_.c_str(), capacity_);
    }
    StatsHeader* h = header();
    // Seqlock write side: odd, (release fence), data, even with release.
    const std::uint64_t seq = h->sequence.load(std::memory_order_relaxed);
    h->sequence.store(seq + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    std::uint64_t* data = data_words();
    for (std::size_t i = 0; i < words.size(); ++i) store_word(&data[i], words[i]);
    store_word(&h->used_bytes, enc.bytes.size());
    store_word(&h->truncated, enc.truncated ? 1 : 0);
    store_word(&h->publish_count, load_word(&h->publish_count) + 1);
    store_word(reinterpret_cast<std::uint64_t*>(&h->publish_time_ns),
               static_cast<std::uint64_t>(wall_clock_ns()));
    h->sequence.store(seq + 2, std::memory_order_release);
    return Status::ok();
}

Result<StatsReading> StatsSegment::read(const std::string& name, Duration timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    // A writer that is still initialising its segment is waited for, briefly.
    auto v = std::make_unique<View>();
    for (;;) {
        Status s = open_view(name, *v);
        if (s.is_ok()) break;
        if (s.code() != Code::Busy || std::chrono::steady_clock::now() >= deadline) return s;
        v = std::make_unique<View>();
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    const StatsHeader* h = v->header();
    const auto* data =
        reinterpret_cast<const std::uint64_t*>(static_cast<const char*>(v->base) + sizeof(StatsHeader));
    const std::size_t capacity = h->capacity;
    std::vector<std::uint64_t> copy;
    for (unsigned attempt = 0;; ++attempt) {
        // Seqlock read side: even sequence, copy, (acquire fence), same sequence.
        const std::uint64_t before = h->sequence.load(std::memory_order_acquire);
        if ((before & 1) == 0) {
            const std::uint64_t used = load_word(&h->used_bytes);
            StatsReading r;
            r.pid = h->pid;
            r.publish_count = load_word(&h->publish_count);
            r.publish_time_ns = static_cast<std::int64_t>(load_field(&h->publish_time_ns));
            r.truncated = load_word(&h->truncated) != 0;
            const bool fits = used <= capacity;
            if (fits) {
                copy.resize(round_up_words(used));
                for (std::size_t i = 0; i < copy.size(); ++i) copy[i] = load_word(&data[i]);
            }
            std::atomic_thread_fence(std::memory_order_acquire);
            if (h->sequence.load(std::memory_order_relaxed) == before) {
                if (!fits)
                    return Status(Code::InvalidArgument, name + ": corrupt stats segment (" +
                                                             std::to_string(used) + " bytes used of " +
                                                             std::to_string(capacity) + ")");
                if (Status s = decode_data(copy.data(), used, r); !s)
                    return Status(s.code(), name + ": " + s.message());
                return r;
            }
        }
        if (std::chrono::steady_clock::now() >= deadline)
            return Status(Code::Busy, name + ": no consistent snapshot after " +
                                          std::to_string(attempt + 1) +
                                          " attempts (writer updating continuously)");
        ::sched_yield();
    }
}

} // namespace tent
