#include "transport/tcp/tcp_redial.h"

#include <poll.h>

#include <cerrno>

namespace tent::tcp {

Result<TcpDial> TcpDial::start(const TcpDialPlan& plan) {
    auto fd = tcp_connect_start(plan.local, plan.remote, plan.buffers);
    if (!fd) return fd.status();
    return TcpDial(std::move(*fd), plan);
}

Status TcpDial::advance() {
    const TimePoint now = SteadyClock::instance().now();
    if (step_ == Step::Connecting) {
        if (Status s = tcp_connect_check(fd_.get(), plan_.remote); !s) return s;
        // The Hello is one small frame into an empty socket buffer.
        if (Status s = tcp_hello_send(fd_.get(), plan_.hello, now + plan_.timeout); !s) return s;
        step_ = Step::AwaitingAnswer;
    }
    if (step_ == Step::AwaitingAnswer) {
        pollfd p{fd_.get(), POLLIN, 0};
        const int n = ::poll(&p, 1, 0);
        if (n < 0 && errno != EINTR) return Status::from_errno(errno, "poll");
        if (n <= 0) return Status(Code::Busy, "waiting for the hello ack of " + plan_.remote.to_string());
        // The answer is one small frame that has begun to arrive.
        auto answer = tcp_hello_read_answer(fd_.get(), plan_.hello, now + plan_.timeout);
        if (!answer) return answer.status();
        step_ = Step::Done;
    }
    return Status::ok();
}

} // namespace tent::tcp
