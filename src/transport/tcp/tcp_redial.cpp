#include "transport/tcp/tcp_redial.h"

#include <poll.h>

#include <cerrno>

#include "wire/frame_codec.h"

namespace tent::tcp {

namespace {

bool readable(int fd) {
    pollfd p{fd, POLLIN, 0};
    return ::poll(&p, 1, 0) > 0;
}

} // namespace

Result<TcpDial> TcpDial::start(const TcpDialPlan& plan) {
    auto auth = AuthProver::start(*plan.keys);
    if (!auth) return auth.status();
    auto fd = tcp_connect_start(plan.local, plan.remote, plan.buffers);
    if (!fd) return fd.status();
    return TcpDial(std::move(*fd), plan, std::move(*auth));
}

Status TcpDial::advance() {
    const TimePoint now = SteadyClock::instance().now();
    if (step_ == Step::Connecting) {
        if (Status s = tcp_connect_check(fd_.get(), plan_.remote); !s) return s;
        // The Greeting and the Hello: a few dozen bytes into an empty socket buffer.
        auto hello = wire::encode_frame(tcp_hello_frame(plan_.hello));
        if (!hello) return hello.status();
        if (Status s = auth_.open(fd_.get(), *hello, now + plan_.timeout); !s) return s;
        step_ = Step::AwaitingAnswer;
    }
    if (step_ == Step::AwaitingAnswer) {
        if (!readable(fd_.get())) return Status(Code::Busy, "waiting for the hello ack of " + plan_.remote.to_string());
        // The Answer and the HelloAck are small and have begun to arrive;
        // the Proof goes out between them.
        auto reply_start = auth_.prove(fd_.get(), now + plan_.timeout);
        if (!reply_start) return reply_start.status();
        auto answer = tcp_hello_read_answer(fd_.get(), plan_.hello, now + plan_.timeout, std::move(*reply_start));
        if (!answer) return answer.status();
        step_ = Step::Done;
    }
    return Status::ok();
}

} // namespace tent::tcp
