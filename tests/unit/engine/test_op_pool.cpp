// Requests' records kept for the next requests (engine/op_pool.h): a
// record taken again has every field at its default, whatever the request
// before left in it, and keeps the room of its lists (not under
// AddressSanitizer, where records are freed).
#include <criterion/criterion.h>

#include "common/sanitizers.h"
#include "engine/op.h"
#include "engine/op_pool.h"

using namespace tent;

Test(op_pool, a_record_taken_again_is_as_new) {
    OpPool pool;
    auto op = pool.take();
    cr_assert(op);
    op->id = 42;
    op->type = OpType::Send;
    op->peer = 7;
    op->length = 4096;
    op->msg_seq = 9;
    op->options.cookie = 1234;
    op->remote.rkeys = {1, 2, 3};
    op->chunks.resize(16);
    op->pieces.resize(16);
    op->pieces[3].failed_on.push_back({1, 2});
    op->headers.resize(16);
    op->outstanding = 3;
    op->hold_last = true;
    op->atomic_open = true;
    op->error = Status(Code::RailDown, "gone");
    const Op* before = op.get();
    pool.give_back(std::move(op));

    auto again = pool.take();
    cr_assert(again);
    if (!kAddressSanitizer) cr_expect_eq(again.get(), before, "the record is reused");
    const Op fresh;
    cr_expect_eq(again->id, fresh.id);
    cr_expect(again->type == fresh.type);
    cr_expect_eq(again->peer, fresh.peer);
    cr_expect_eq(again->length, fresh.length);
    cr_expect_eq(again->msg_seq, fresh.msg_seq);
    cr_expect_eq(again->options.cookie, fresh.options.cookie);
    cr_expect(again->remote == fresh.remote);
    cr_expect(again->chunks.empty());
    cr_expect(again->pieces.empty());
    cr_expect(again->headers.empty());
    cr_expect_eq(again->outstanding, 0u);
    cr_expect_not(again->hold_last);
    cr_expect_not(again->atomic_open);
    cr_expect(again->error.is_ok());
    if (!kAddressSanitizer) {
        cr_expect_geq(again->chunks.capacity(), 16u, "the lists keep their room");
        cr_expect_geq(again->pieces.capacity(), 16u);
        cr_expect_geq(again->headers.capacity(), 16u);
    }
    // A second record while the first is out is another one.
    auto other = pool.take();
    cr_expect_neq(other.get(), again.get());
}
