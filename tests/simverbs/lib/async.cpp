// Asynchronous events: each context has a pipe whose read end is async_fd, so
// the fd is pollable and ibv_get_async_event blocks like the real one.
#include <unistd.h>

#include <cerrno>

#include "simverbs.h"

namespace sv {

namespace {
struct AsyncRecord {
  ibv_event_type type;
  void* element;
};
}  // namespace

void post_async(Context* ctx, ibv_event_type type, void* element) {
  AsyncRecord r{};  // zeroed padding too: the whole record goes through the pipe
  r.type = type;
  r.element = element;
  ssize_t n = write(ctx->async_wfd, &r, sizeof r);
  (void)n;
}

void port_event(Port* port, ibv_event_type type) {
  std::lock_guard<std::mutex> g(port->mu);
  for (Context* c : port->contexts) post_async(c, type, nullptr);
}

}  // namespace sv

using namespace sv;

SV_EXPORT int ibv_get_async_event(ibv_context* c, ibv_async_event* event) {
  if (!c || !event) {
    errno = EINVAL;
    return -1;
  }
  AsyncRecord r;
  if (read(c->async_fd, &r, sizeof r) != ssize_t(sizeof r)) return -1;
  event->event_type = r.type;
  switch (r.type) {
    case IBV_EVENT_CQ_ERR: event->element.cq = static_cast<ibv_cq*>(r.element); break;
    case IBV_EVENT_QP_FATAL:
    case IBV_EVENT_QP_REQ_ERR:
    case IBV_EVENT_QP_ACCESS_ERR:
    case IBV_EVENT_COMM_EST:
    case IBV_EVENT_SQ_DRAINED:
    case IBV_EVENT_PATH_MIG:
    case IBV_EVENT_PATH_MIG_ERR:
    case IBV_EVENT_QP_LAST_WQE_REACHED: event->element.qp = static_cast<ibv_qp*>(r.element); break;
    case IBV_EVENT_SRQ_ERR:
    case IBV_EVENT_SRQ_LIMIT_REACHED: event->element.srq = static_cast<ibv_srq*>(r.element); break;
    case IBV_EVENT_DEVICE_FATAL: event->element.port_num = 0; break;
    default: event->element.port_num = 1; break;
  }
  return 0;
}

SV_EXPORT void ibv_ack_async_event(ibv_async_event*) {}
