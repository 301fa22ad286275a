// The process-wide engine: simulated ports with their addresses and listening
// sockets, links to other processes, and the progress thread that receives
// packets, executes one-sided operations for remote initiators, delivers
// acknowledgements and fires timeouts, so the application never has to call
// verbs for the target side of RDMA to make progress.
#include <algorithm>
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <pthread.h>

#include "simverbs.h"

namespace sv {

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

PktPtr make_pkt(PktType type, uint32_t payload_len) {
  auto p = std::make_shared<Bytes>(sizeof(PktHdr) + payload_len);
  PktHdr* h = hdr_of(p);
  memset(h, 0, sizeof *h);
  h->type = type;
  h->len = payload_len;
  return p;
}

namespace {

uint64_t rand64() {
  thread_local uint64_t s = now_ns() ^ (uint64_t(getpid()) << 32) ^ uint64_t(uintptr_t(&s));
  s ^= s << 13;
  s ^= s >> 7;
  s ^= s << 17;
  return s;
}

std::string dotted(uint32_t ip) {
  in_addr a{htonl(ip)};
  char buf[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, &a, buf, sizeof buf);
  return buf;
}

bool fill_sun(sockaddr_un* sa, const std::string& path) {
  memset(sa, 0, sizeof *sa);
  sa->sun_family = AF_UNIX;
  if (path.size() >= sizeof sa->sun_path) return false;
  memcpy(sa->sun_path, path.c_str(), path.size() + 1);
  return true;
}

// A socket file made in the last few seconds may belong to a process
// between its bind() and its listen(), which refuses connections too.
bool made_recently(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return false;
  timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  return now.tv_sec - st.st_ctim.tv_sec < 5;
}

// Is someone listening on this socket path? (false also for a stale file)
bool path_alive(const std::string& path) {
  sockaddr_un sa;
  if (!fill_sun(&sa, path)) return false;
  // non-blocking: a listener whose backlog is full is alive, not a reason to wait
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return true;
  bool alive = connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0 || errno != ECONNREFUSED;
  close(fd);
  return alive || made_recently(path);
}

// Bind a listening socket at path, replacing a stale one. -1 if it is in use.
int listen_at(const std::string& path) {
  sockaddr_un sa;
  if (!fill_sun(&sa, path)) return -1;
  for (int attempt = 0; attempt < 2; attempt++) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return -1;
    if (bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0) {
      if (listen(fd, 128) == 0) return fd;
      close(fd);
      return -1;
    }
    int err = errno;
    close(fd);
    if (err != EADDRINUSE || path_alive(path)) return -1;
    unlink(path.c_str());  // stale: its process is gone
  }
  return -1;
}

void make_dir(const std::string& d) {
  if (mkdir(d.c_str(), 01777) == 0) chmod(d.c_str(), 01777);
}

// Remove sockets left by processes that died without cleaning up (killed,
// or ended with _exit). Bounded: a start-up must stay fast.
void remove_stale_sockets(const std::string& d) {
  DIR* dir = opendir(d.c_str());
  if (!dir) return;
  int n = 0;
  while (dirent* e = readdir(dir)) {
    if (++n > 1024) break;
    std::string name = e->d_name;
    if (name.size() < 5 || (name.compare(name.size() - 5, 5, ".sock") != 0 && name.compare(name.size() - 4, 4, ".ctl") != 0))
      continue;
    std::string path = d + "/" + name;
    if (!path_alive(path)) unlink(path.c_str());
  }
  closedir(dir);
}

enum class Src { kListen, kLink, kWake, kTimer, kCtl };
struct Source {
  Src kind;
  void* obj;
};

void tune_socket(int fd) {
  int sz = 4 << 20;
  setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
}

std::atomic<Engine*> g_engine{nullptr};
thread_local Engine::DeferredWrites* t_deferred = nullptr;
std::mutex g_init_mu;
std::vector<std::string> g_cleanup;

// A forked child has no progress thread and must not own the parent's
// sockets: it starts afresh with its own ports on its next verbs call.
void forget_engine_in_child() {
  g_engine.store(nullptr);
  g_cleanup.clear();
  forget_all_pending_acks();
  new (&g_init_mu) std::mutex();
}

void cleanup_at_exit() {
  for (auto& p : g_cleanup) unlink(p.c_str());
}

}  // namespace

bool Port::lose_packet() {
  if (down.load(std::memory_order_relaxed)) {
    drops++;
    return true;
  }
  std::lock_guard<std::mutex> g(mu);
  if (faults.drop_rate > 0 && double(rand64() >> 11) / double(1ull << 53) < faults.drop_rate) {
    drops++;
    return true;
  }
  return false;
}

ibv_gid Port::gid() const {
  ibv_gid g{};
  g.raw[10] = 0xff;
  g.raw[11] = 0xff;
  uint32_t be = htonl(ip);
  memcpy(&g.raw[12], &be, 4);
  return g;
}

Engine* Engine::get() {
  Engine* e = g_engine.load(std::memory_order_acquire);
  if (!e) {
    std::lock_guard<std::mutex> g(g_init_mu);
    e = g_engine.load();
    if (!e) {
      auto* n = new Engine();
      if (!n->init()) {
        int err = errno ? errno : ENODEV;
        errno = err;
        return nullptr;  // (leaks the half-built engine: rare, and retried next call)
      }
      g_engine.store(n, std::memory_order_release);
      e = n;
    }
  }
  // SIMVERBS_FAULTS go through the control commands, which use the engine:
  // apply them once initialisation is over, not from inside it
  if (!e->settings.faults.empty() && !e->faults_applied_.exchange(true)) apply_env_faults(e->settings.faults);
  return e;
}

bool Engine::init() {
  settings = read_settings();
  if (!settings.bad_port_addresses.empty()) {
    fprintf(stderr, "simverbs: SIMVERBS_PORT_ADDRESSES: '%s' is not an IPv4 address\n",
            settings.bad_port_addresses.c_str());
    errno = EINVAL;
    return false;
  }
  make_dir(settings.dir);
  make_dir(settings.dir + "/addr");
  rundir = settings.dir + "/" + settings.fabric;
  make_dir(rundir);
  remove_stale_sockets(settings.dir + "/addr");
  remove_stale_sockets(rundir);

  uint32_t pid = uint32_t(getpid());
  for (size_t i = 0; i < settings.devices.size(); i++) {
    auto port = std::make_unique<Port>();
    port->index = int(i);
    port->name = settings.devices[i];
    // Address derived from pid and port index; on a clash step to another
    // /16. One given in SIMVERBS_PORT_ADDRESSES is taken as it is or not at all.
    bool given = i < settings.port_addresses.size();
    uint32_t v = (pid * 16 + uint32_t(i)) & 0xffffff;
    for (int attempt = 0; attempt < (given ? 1 : 512) && port->listen_fd < 0;
         attempt++, v = (v + 0x10000 * 7 + 1) & 0xffffff) {
      if (!given && ((v & 0xff) == 0 || (v & 0xff) == 255 || (v >> 8) == 0)) continue;
      uint32_t ip = given ? settings.port_addresses[i] : 0x7f000000u | v;
      // The address is claimed machine-wide (all fabrics) by a socket in
      // addr/, so GIDs stay unique even between isolated test runs.
      std::string claim = settings.dir + "/addr/" + dotted(ip) + ".sock";
      int cfd = listen_at(claim);
      if (cfd < 0) continue;
      std::string path = rundir + "/port-" + dotted(ip) + ".sock";
      int fd = listen_at(path);
      if (fd < 0) {
        close(cfd);
        unlink(claim.c_str());
        continue;
      }
      g_cleanup.push_back(claim);
      port->ip = ip;
      port->sock_path = path;
      port->listen_fd = fd;
      g_cleanup.push_back(path);
    }
    if (port->listen_fd < 0) {
      if (given)
        fprintf(stderr, "simverbs: SIMVERBS_PORT_ADDRESSES: %s (port of %s) is in use by another process\n",
                dotted(settings.port_addresses[i]).c_str(), port->name.c_str());
      return false;
    }
    port->guid = (0x0c42a10300000000ull) | (uint64_t(port->ip & 0xffffff) << 8) | uint64_t(i);

    auto* dev = static_cast<ibv_device*>(calloc(1, sizeof(ibv_device)));
    dev->node_type = IBV_NODE_CA;
    dev->transport_type = IBV_TRANSPORT_IB;
    snprintf(dev->name, sizeof dev->name, "%s", port->name.c_str());
    snprintf(dev->dev_name, sizeof dev->dev_name, "uverbs%zu", i);
    snprintf(dev->dev_path, sizeof dev->dev_path, "/sys/class/infiniband_verbs/uverbs%zu", i);
    snprintf(dev->ibdev_path, sizeof dev->ibdev_path, "/sys/class/infiniband/%s", port->name.c_str());
    port->dev = dev;
    ports.push_back(std::move(port));
  }

  epfd_ = epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  timer_fd_ = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  if (epfd_ < 0 || wake_fd_ < 0 || timer_fd_ < 0) return false;
  auto add = [this](int fd, Src kind, void* obj) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.ptr = new Source{kind, obj};
    epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev);
  };
  for (auto& p : ports) add(p->listen_fd, Src::kListen, p.get());
  add(wake_fd_, Src::kWake, nullptr);
  add(timer_fd_, Src::kTimer, nullptr);

  ctl_path_ = rundir + "/" + std::to_string(pid) + ".ctl";
  unlink(ctl_path_.c_str());  // a previous process with our pid is gone
  ctl_fd_ = listen_at(ctl_path_);
  if (ctl_fd_ >= 0) {
    g_cleanup.push_back(ctl_path_);
    add(ctl_fd_, Src::kCtl, nullptr);
  }
  static std::once_flag hooks;
  std::call_once(hooks, [] {
    atexit(cleanup_at_exit);
    pthread_atfork(nullptr, nullptr, forget_engine_in_child);
  });

  // The progress thread takes no signals: they stay with the application.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  thread_ = std::thread([this] { loop(); });
  thread_.detach();
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return true;
}

Port* Engine::port_by_name(const std::string& name) {
  for (auto& p : ports)
    if (p->name == name) return p.get();
  return nullptr;
}

void Engine::wake() {
  uint64_t one = 1;
  ssize_t r = write(wake_fd_, &one, sizeof one);
  (void)r;
}

void Engine::register_qp(Qp* qp) {
  std::lock_guard<std::mutex> g(map_mu);
  uint32_t qpn;
  do {
    qpn = next_qpn++ & 0xffffff;
  } while (qpn < 2 || qps.count(qpn));
  qp->qpx.qp_base.qp_num = qpn;
  qps[qpn] = qp;
}

void Engine::unregister_qp(Qp* qp) {
  {
    std::lock_guard<std::mutex> g(map_mu);
    qps.erase(qp->qpx.qp_base.qp_num);
  }
  std::lock_guard<std::mutex> g(dispatch_mu);  // progress thread no longer uses it
  forget_pending_ack(qp);
}

Qp* Engine::find_qp(uint32_t qpn) {
  std::lock_guard<std::mutex> g(map_mu);
  auto it = qps.find(qpn);
  return it == qps.end() ? nullptr : it->second;
}

Mr* Engine::find_mr(uint32_t key) {
  auto it = mrs.find(key);
  return it == mrs.end() ? nullptr : it->second;
}

void Engine::add_link_fd(Link* l) {
  epoll_event ev{};
  ev.events = EPOLLIN;
  if (!l->tag) l->tag = new Source{Src::kLink, l};
  ev.data.ptr = l->tag;
  epoll_ctl(epfd_, EPOLL_CTL_ADD, l->fd, &ev);
}

Link* Engine::out_link(Port* port, uint32_t remote_ip) {
  std::lock_guard<std::mutex> g(link_mu_);
  auto key = std::make_pair(port->index, remote_ip);
  auto it = out_links_.find(key);
  if (it != out_links_.end()) return it->second;
  auto l = std::make_unique<Link>();
  l->port = port;
  l->remote_ip = remote_ip;
  l->outgoing = true;
  l->rxbuf.resize(256 * 1024);
  Link* raw = l.get();
  links_.push_back(std::move(l));
  out_links_[key] = raw;
  return raw;
}

uint64_t Engine::send(Link* l, const PktPtr& pkt, uint64_t ready_ns) {
  PktHdr* h = hdr_of(pkt);
  Port* port = l->port;
  h->src_ip = port->ip;
  uint64_t now = now_ns();
  uint64_t at = ready_ns != 0 && ready_ns < now ? ready_ns : now;
  if (settings.rate_gbps > 0) {
    std::lock_guard<std::mutex> g(port->mu);
    uint64_t start = std::max(at, port->next_free_ns);
    port->next_free_ns = start + uint64_t(double(pkt->size()) * 8.0 / settings.rate_gbps);
    at = port->next_free_ns;
  }
  h->deliver_at_ns = at + uint64_t(settings.delay_us * 1000.0);
  if (port->lose_packet()) return at;  // cable pulled or lost on the wire
  port->tx_pkts++;
  port->tx_bytes += h->len;

  std::lock_guard<std::mutex> g(l->mu);
  if (l->fd < 0) {
    if (!l->outgoing || now - l->last_connect_ns < 20 * 1000000ull) return at;  // lost
    l->last_connect_ns = now;
    std::string path = rundir + "/port-" + dotted(l->remote_ip) + ".sock";
    sockaddr_un sa;
    if (!fill_sun(&sa, path)) return at;
    // non-blocking: a stopped peer with a full backlog must not stall us
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return at;
    tune_socket(fd);
    if (connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
      close(fd);
      return at;  // nobody there: the packet is lost, the requester will time out
    }
    l->fd = fd;
    l->want_out = false;
    add_link_fd(l);
  }
  l->outq.emplace_back(pkt, 0);
  if (DeferredWrites* d = t_deferred) {
    if (std::find(d->links_.begin(), d->links_.end(), l) == d->links_.end()) d->links_.push_back(l);
    return at;
  }
  // try to write at once; what does not fit goes out on EPOLLOUT
  if (l->outq.size() == 1 && write_outq_locked(l) == Written::kAll) return at;
  if (!l->want_out) want_out_locked(l, true);
  return at;
}

Engine::Written Engine::write_outq_locked(Link* l) {
  while (!l->outq.empty()) {
    auto& [p, off] = l->outq.front();
    ssize_t n = ::send(l->fd, p->data() + off, p->size() - off, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) return errno == EAGAIN || errno == EINTR ? Written::kSocketFull : Written::kPeerGone;
    if (n == 0) return Written::kSocketFull;
    off += size_t(n);
    if (off == p->size()) l->outq.pop_front();
  }
  return Written::kAll;
}

void Engine::want_out_locked(Link* l, bool want) {
  l->want_out = want;
  epoll_event ev{};
  ev.events = want ? EPOLLIN | EPOLLOUT : EPOLLIN;
  ev.data.ptr = l->tag;
  epoll_ctl(epfd_, EPOLL_CTL_MOD, l->fd, &ev);
}

Engine::DeferredWrites::DeferredWrites() : outer_(t_deferred) { t_deferred = this; }

Engine::DeferredWrites::~DeferredWrites() {
  t_deferred = outer_;
  if (links_.empty()) return;
  Engine* e = Engine::get();
  for (Link* l : links_) e->write_queued(l);
}

// Write what a DeferredWrites queued; what does not fit goes out on EPOLLOUT.
void Engine::write_queued(Link* l) {
  std::lock_guard<std::mutex> g(l->mu);
  if (l->fd < 0 || l->want_out) return;  // lost, or EPOLLOUT will write it
  if (write_outq_locked(l) != Written::kAll) want_out_locked(l, true);
}

void Engine::flush_link(Link* l, bool) {
  std::lock_guard<std::mutex> g(l->mu);
  if (l->fd < 0) return;
  Written w = write_outq_locked(l);
  if (w == Written::kSocketFull) return;
  if (w == Written::kPeerGone) l->outq.clear();  // everything queued is lost
  if (l->want_out) want_out_locked(l, false);
}

void Engine::close_link(Link* l) {
  std::lock_guard<std::mutex> g(l->mu);
  if (l->fd < 0) return;
  epoll_ctl(epfd_, EPOLL_CTL_DEL, l->fd, nullptr);
  close(l->fd);
  l->fd = -1;
  l->outq.clear();
  l->want_out = false;
  l->rx_have = 0;
  l->rx_cur.reset();
  // An accepted link is never used again once closed (a peer that comes
  // back connects anew), but it stays listed for the packets it still
  // holds: give its 256 KiB staging buffer back, or every process that
  // ever connected to this one costs that much for good (the soak saw
  // about 1 MB per short-lived pair of processes in the fabric).
  if (!l->outgoing) std::vector<uint8_t>().swap(l->rxbuf);
}

void Engine::accept_on(Port* port) {
  for (int i = 0; i < 16; i++) {
    int fd = accept4(port->listen_fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) return;
    tune_socket(fd);
    auto l = std::make_unique<Link>();
    l->fd = fd;
    l->port = port;
    l->rxbuf.resize(256 * 1024);
    Link* raw = l.get();
    {
      std::lock_guard<std::mutex> g(link_mu_);
      links_.push_back(std::move(l));
    }
    add_link_fd(raw);
  }
}

// A complete packet arrived: hold it until its delivery time, keeping order.
static void arrive(Link* l, PktPtr pkt, uint64_t now) {
  l->port->rx_pkts++;
  l->port->rx_bytes += hdr_of(pkt)->len;
  if (!l->held.empty() || hdr_of(pkt)->deliver_at_ns > now) {
    l->held.push_back(std::move(pkt));
    Engine::get()->note_held();
    return;
  }
  if (l->port->lose_packet()) return;
  PktType t = hdr_of(pkt)->type;
  if (t <= PktType::kUdSend) on_request(l, pkt);
  else on_response(l, pkt);
}

void Engine::read_link(Link* l) {
  uint64_t now = now_ns();
  for (int round = 0; round < 32; round++) {
    if (l->rx_cur) {  // a large payload goes straight into its packet
      Bytes& b = *l->rx_cur;
      ssize_t n = read(l->fd, b.data() + l->rx_cur_off, b.size() - l->rx_cur_off);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        close_link(l);
        return;
      }
      if (n < 0) return;
      l->rx_cur_off += size_t(n);
      if (l->rx_cur_off == b.size()) {
        PktPtr p = std::move(l->rx_cur);
        l->rx_cur.reset();
        arrive(l, std::move(p), now);
      }
      continue;
    }
    // Read little into the staging buffer: a large payload then mostly
    // arrives straight in its packet buffer instead of being copied twice.
    size_t want = std::min(l->rxbuf.size() - l->rx_have, size_t(16384));
    ssize_t n = read(l->fd, l->rxbuf.data() + l->rx_have, want);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
      close_link(l);
      return;
    }
    if (n < 0) return;
    l->rx_have += size_t(n);
    size_t off = 0;
    while (l->rx_have - off >= sizeof(PktHdr)) {
      PktHdr h;
      memcpy(&h, l->rxbuf.data() + off, sizeof h);
      if (h.len > (1u << 31)) {  // garbage: drop the connection
        close_link(l);
        return;
      }
      size_t total = sizeof h + h.len;
      auto p = std::make_shared<Bytes>(total);
      size_t avail = std::min(total, l->rx_have - off);
      memcpy(p->data(), l->rxbuf.data() + off, avail);
      off += avail;
      if (avail < total) {
        l->rx_cur = std::move(p);
        l->rx_cur_off = avail;
        break;
      }
      arrive(l, std::move(p), now);
      if (l->fd < 0) return;
    }
    memmove(l->rxbuf.data(), l->rxbuf.data() + off, l->rx_have - off);
    l->rx_have -= off;
  }
}

void Engine::deliver_held(uint64_t now, uint64_t* next_ns) {
  have_held_ = false;
  std::vector<Link*> ls;
  {
    std::lock_guard<std::mutex> g(link_mu_);
    for (auto& l : links_)
      if (!l->held.empty()) ls.push_back(l.get());
  }
  for (Link* l : ls) {
    while (!l->held.empty()) {
      PktPtr p = l->held.front();
      uint64_t at = hdr_of(p)->deliver_at_ns;
      if (at > now) {
        *next_ns = std::min(*next_ns, at);
        have_held_ = true;
        break;
      }
      l->held.pop_front();
      if (l->port->lose_packet()) continue;
      if (hdr_of(p)->type <= PktType::kUdSend) on_request(l, p);
      else on_response(l, p);
    }
  }
}

void Engine::serve_control() {
  int fd = accept4(ctl_fd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) return;
  timeval tv{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  std::string line;
  char c;
  while (line.size() < 4096 && read(fd, &c, 1) == 1 && c != '\n') line += c;
  std::string reply = run_command(line);
  size_t off = 0;
  while (off < reply.size()) {
    ssize_t n = ::send(fd, reply.data() + off, reply.size() - off, MSG_NOSIGNAL);
    if (n <= 0) break;
    off += size_t(n);
  }
  close(fd);
}

// One round of progress: receive, execute, deliver held packets. The progress
// thread blocks here; threads polling an empty CQ also call it, so a
// busy-polling application on few cores does not wait for the progress
// thread to be scheduled.
bool Engine::progress(int timeout_ms, bool from_app) {
  epoll_event evs[64];
  std::unique_lock<std::mutex> g(dispatch_mu, std::defer_lock);
  if (from_app) {
    if (!g.try_lock()) return false;
  }
  int n = epoll_wait(epfd_, evs, 64, timeout_ms);
  if (!from_app) g.lock();
  bool ctl = false, timer_fired = false;
  for (int i = 0; i < n; i++) {
    auto* s = static_cast<Source*>(evs[i].data.ptr);
    switch (s->kind) {
      case Src::kListen: accept_on(static_cast<Port*>(s->obj)); break;
      case Src::kLink: {
        Link* l = static_cast<Link*>(s->obj);
        if (l->fd < 0) break;
        if (evs[i].events & EPOLLOUT) flush_link(l, true);
        if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) read_link(l);
        break;
      }
      case Src::kWake: {
        uint64_t v;
        ssize_t r = read(wake_fd_, &v, sizeof v);
        (void)r;
        break;
      }
      case Src::kTimer: {
        uint64_t v;
        ssize_t r = read(timer_fd_, &v, sizeof v);
        (void)r;
        timer_fired = true;
        break;
      }
      case Src::kCtl: ctl = true; break;
    }
  }
  uint64_t now = now_ns();
  uint64_t next = now + 10 * 1000000ull;
  if (have_held_) deliver_held(now, &next);
  flush_acks();
  // Timeouts are scanned at most every 200 us (or when the timer fires):
  // under heavy traffic the scan over all QPs would otherwise run per batch.
  bool scanned = false;
  if (!from_app && (timer_fired || now >= last_scan_ns_ + 200000)) {
    last_scan_ns_ = now;
    check_timeouts(now_ns(), &next);
    scanned = true;
  }
  if (timer_fired || timer_at_ns_ <= now) timer_at_ns_ = 0;
  // After a scan the timer is set to the next due event; between scans it
  // is only brought forward, for a held packet due sooner. Otherwise a
  // packet held by a capped port on an idle link waited for the 10 ms tick.
  if (scanned || (have_held_ && (timer_at_ns_ == 0 || next < timer_at_ns_))) {
    itimerspec its{};
    its.it_value.tv_sec = time_t(next / 1000000000ull);
    its.it_value.tv_nsec = long(next % 1000000000ull);
    timerfd_settime(timer_fd_, TFD_TIMER_ABSTIME, &its, nullptr);
    timer_at_ns_ = next;
  }
  g.unlock();
  if (ctl) serve_control();
  return n > 0;
}

void Engine::loop() {
  for (;;) progress(10, false);
}

}  // namespace sv
