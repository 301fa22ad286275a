// Async events: the element read for each type and what the health layer
// is told. No device needed.
#include <criterion/criterion.h>

#include "transport/verbs/async_event.h"

using namespace tent;

Test(async_event, port_events_carry_the_port_number) {
    ibv_async_event ev{};
    ev.event_type = IBV_EVENT_PORT_ERR;
    ev.element.port_num = 2;
    auto e = classify_async_event(ev);
    cr_expect_eq(e.kind, VerbsAsyncEvent::Kind::PortError);
    cr_expect_eq(e.port_num, 2);
    ev.event_type = IBV_EVENT_PORT_ACTIVE;
    ev.element.port_num = 1;
    e = classify_async_event(ev);
    cr_expect_eq(e.kind, VerbsAsyncEvent::Kind::PortActive);
    cr_expect_eq(e.port_num, 1);
}

Test(async_event, qp_fatal_names_the_qp_and_device_fatal_no_port) {
    ibv_qp qp{};
    qp.qp_num = 0x1234;
    ibv_async_event ev{};
    ev.event_type = IBV_EVENT_QP_FATAL;
    ev.element.qp = &qp;
    auto e = classify_async_event(ev);
    cr_expect_eq(e.kind, VerbsAsyncEvent::Kind::QpFatal);
    cr_expect_eq(e.qp_num, 0x1234u);
    cr_expect_eq(e.port_num, 0);
    ibv_async_event fatal{};
    fatal.event_type = IBV_EVENT_DEVICE_FATAL;
    cr_expect_eq(classify_async_event(fatal).kind, VerbsAsyncEvent::Kind::DeviceFatal);
    ibv_async_event lid{};
    lid.event_type = IBV_EVENT_LID_CHANGE;
    lid.element.port_num = 1;
    cr_expect_eq(classify_async_event(lid).kind, VerbsAsyncEvent::Kind::Other);
}

Test(async_event, health_layer_sees_port_and_device_events_only) {
    cr_expect_eq(health_event_of(VerbsAsyncEvent::Kind::PortError), AsyncEvent::PortError);
    cr_expect_eq(health_event_of(VerbsAsyncEvent::Kind::PortActive), AsyncEvent::PortActive);
    cr_expect_eq(health_event_of(VerbsAsyncEvent::Kind::DeviceFatal), AsyncEvent::DeviceFatal);
    cr_expect_eq(health_event_of(VerbsAsyncEvent::Kind::QpFatal), AsyncEvent::Other);
    cr_expect_eq(health_event_of(VerbsAsyncEvent::Kind::Other), AsyncEvent::Other);
}
