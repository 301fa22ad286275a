// tent's engine in the program's process: started in the background when the
// first queue pair is created, stopped at exit once no thread is inside it;
// one connection per peer engine.
#include "runtime_state.h"

#include <chrono>
#include <pthread.h>
#include <thread>
#include <unistd.h>

#include "activation.h"
#include "common/log.h"
#include "common/signal_free_thread.h"
#include "engine_address.h"
#include "settings.h"

namespace tent::interpose {

// Published (stored last) once the engine and g_pool are set, and forks watched:
// threads that never called engine() (a program waiting on a channel, the
// harvester) read it without the once flag's ordering.
std::atomic<tent_engine_t*> g_engine{nullptr};
SendPool* g_pool = nullptr;  // with the engine, never freed
std::atomic<bool> g_stop{false};  // set once the process exits (shut_down())

namespace {

std::once_flag g_engine_once;

// Threads inside tent's engine through the interposer (the program's
// posting, polling, waiting on a channel; discovery connecting and
// announcing): shut_down() destroys the engine only once none is, and none
// enters after g_stop is set. A program that exits while another of its
// threads still polls, or while a queue pair still looks for its peer, must
// not have that thread find the engine freed.
std::atomic<int> g_program_inside{0};

// The process whose thread is starting the engine, 0 while none is: a
// program that exits right after creating its first queue pair must not
// have that start run on into the exit's destruction of the libraries it
// uses (shut_down() waits for it).
std::atomic<pid_t> g_starting_pid{0};
std::thread* g_harvester = nullptr;

} // namespace

namespace {

// Set in a child of fork() (pthread_atfork, registered before the engine
// is published): the engine is the parent's. A flag rather than getpid()
// per call: every wait on a completion channel asks, and a system call
// costs a microsecond on a virtual machine. fork() runs the handler;
// vfork() and posix_spawn() children only exec, and run none of this.
std::atomic<bool> g_forked_child{false};

} // namespace

bool engine_is_inherited() { return g_forked_child.load(std::memory_order_relaxed); }

// Sequentially consistent, against shut_down() setting g_stop and then
// counting: either this thread sees g_stop, or shut_down() sees it.
InsideEngine::InsideEngine() { g_program_inside.fetch_add(1); }
InsideEngine::~InsideEngine() { g_program_inside.fetch_sub(1); }
bool InsideEngine::usable() const { return !g_stop.load(); }

tent_engine_t* engine() {
    std::call_once(g_engine_once, [] {
        // As InsideEngine against shut_down(): either the start is seen
        // and waited for, or it sees the exit and does not begin.
        g_starting_pid.store(getpid());
        struct Started {
            ~Started() { g_starting_pid.store(0); }
        } started;
        if (g_stop.load()) return;
        if (!configuration_valid()) return;  // said once, with what follows
        TentScope scope;
        tent_engine_t* e = nullptr;
        if (int rc = create_engine(&e); rc != TENT_OK) {
            TENT_ERROR("interpose-engine", "interposer: tent's engine did not start: %s; queue pairs pass through",
                       tent_strerror(rc));
            return;
        }
        tent_set_recv_callback(e, on_message, nullptr);
        // Never destroyed: shut_down() is registered before this start,
        // so a static's destructor would run before it, under threads
        // still posting and an engine still using the pool's buffers.
        g_pool = new SendPool(e);
        pthread_atfork(nullptr, nullptr, [] { g_forked_child.store(true, std::memory_order_relaxed); });
        g_engine.store(e, std::memory_order_release);
        // Never destroyed: a static std::thread still joinable at exit
        // would terminate a forked child, which has no such thread to
        // join; the parent joins it in shut_down().
        g_harvester = new std::thread(signal_free_thread(harvest));
    });
    // A child of fork() inherits the parent's engine without its threads,
    // and its address names the parent's listener: the child's queue pairs
    // pass through to the HCA.
    if (engine_is_inherited()) return nullptr;
    return g_engine;
}

const char* why_no_engine() {
    if (g_stop.load()) return "the process is exiting";
    if (g_engine && engine_is_inherited()) return "a child of fork(): tent's engine is the parent's";
    if (!configuration_valid()) return "the configuration is invalid";
    return "tent's engine did not start";
}

tent_peer_t* peer_for(const std::string& blob) {
    State& s = state();
    {
        std::lock_guard lock(s.mu);
        if (auto it = s.peers.find(blob); it != s.peers.end()) return it->second;
    }
    InsideEngine inside;
    if (!inside.usable()) return nullptr;
    tent_engine_t* e = engine();
    if (!e) return nullptr;
    tent_peer_t* p = nullptr;
    TentScope scope;
    if (tent_connect(e, blob.data(), blob.size(), &p) != TENT_OK) return nullptr;
    std::lock_guard lock(s.mu);
    return s.peers.emplace(blob, p).first->second;
}

// At exit (registered when the first queue pair is created, before the
// engine starts): stop harvesting, then the engine (its peers see it
// leave). What the engine uses must outlive it: the interposer's tables
// and the send pool are never freed.
void shut_down() {
    g_stop = true;
    // An engine still starting on another thread (the program exits right
    // after creating a queue pair) is waited for: its start takes tens of
    // milliseconds. Bounded: 2 s, then the exit goes on.
    for (int i = 0; i < 2000 && g_starting_pid.load() == getpid(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    // A child of fork() has none of the engine's threads: the engine is the
    // parent's to stop (joining or destroying it here would hang or crash).
    if (!g_engine || engine_is_inherited()) return;
    if (g_harvester && g_harvester->joinable()) g_harvester->join();
    // A program thread inside the engine (another thread still polling or
    // waiting on a channel while this one exits) leaves within a wait's
    // bound (100 ms): wait for it, for up to 300 ms, else leave the engine
    // to the exit rather than free it under that thread.
    for (int i = 0; i < 300 && g_program_inside.load() > 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (g_program_inside.load() > 0) return;
    TentScope scope;
    // What each rail carried, for whoever runs with log_level info.
    tent_rail_stats_t stats[64];
    int n = tent_rail_stats(g_engine, stats, 64);
    for (int i = 0; i < n && i < 64; ++i)
        TENT_INFO("interpose-rail", "interposer: rail %s: %llu ops, %llu bytes, %llu errors", stats[i].name,
                  static_cast<unsigned long long>(stats[i].ops), static_cast<unsigned long long>(stats[i].bytes),
                  static_cast<unsigned long long>(stats[i].errors));
    tent_engine_destroy(g_engine);
    g_engine = nullptr;
}

} // namespace tent::interpose
