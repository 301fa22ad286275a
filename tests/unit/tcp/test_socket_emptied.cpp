// When a TCP rail stops reading its socket for the turn: a read that got
// less than it had room for found the socket empty. A small one ends the
// turn (a request-response exchange would otherwise pay a recv() that fails
// with EAGAIN per message); a large one does not, since more of a stream
// arrives while it copies; and the read that ended a read's data ends the
// turn whatever its size once no other read's data is due on the rail.
#include <criterion/criterion.h>

#include "transport/tcp/tcp_rail_detail.h"

using namespace tent::tcp;

Test(socket_emptied, a_short_small_read_empties_the_socket) {
    cr_expect(detail::emptied_socket(100, 16 * 1024));
    cr_expect(detail::emptied_socket(64 * 1024 - 1, 200 * 1024));
}

Test(socket_emptied, a_full_read_leaves_more_to_read) {
    cr_expect_not(detail::emptied_socket(16 * 1024, 16 * 1024));
    cr_expect_not(detail::emptied_socket(1, 1));
}

Test(socket_emptied, a_short_large_read_keeps_a_stream_reading) {
    cr_expect_not(detail::emptied_socket(64 * 1024, 200 * 1024));
    cr_expect_not(detail::emptied_socket(144 * 1024 - 1, 144 * 1024));
}

Test(socket_emptied, the_last_read_data_ends_the_turn_whatever_its_size) {
    cr_expect(detail::read_data_ended_stream(128 * 1024 + 40, 144 * 1024, false));
    cr_expect(detail::read_data_ended_stream(100, 16 * 1024, false));
}

Test(socket_emptied, more_read_data_due_keeps_reading) {
    cr_expect_not(detail::read_data_ended_stream(128 * 1024 + 40, 144 * 1024, true));
}

Test(socket_emptied, a_full_read_at_the_end_of_read_data_keeps_reading) {
    // The socket may hold more (a frame behind the read's Ack).
    cr_expect_not(detail::read_data_ended_stream(144 * 1024, 144 * 1024, false));
}
