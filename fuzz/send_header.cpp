// Fuzz target: the header in front of every fragment of a two-sided message,
// which a peer sends, and the reassembler it feeds. The input is a series of
// fragments, each a kSendHeaderSize-byte header, a one-byte payload length
// and the payload. Messages come out whole, in order, each once.
#include <span>

#include "engine/send_header.h"
#include "engine/send_reassembler.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace tent;
    // Small, so that a header announcing a huge message is refused, not allocated.
    SendReassembler reassembler(1 << 16);
    std::span<const std::uint8_t> rest(data, size);
    std::uint64_t released = 0;
    while (rest.size() >= kSendHeaderSize) {
        auto header_bytes = rest.first(kSendHeaderSize);
        rest = rest.subspan(kSendHeaderSize);
        std::size_t length = 0;
        if (!rest.empty()) {
            length = std::min<std::size_t>(rest[0], rest.size() - 1);
            rest = rest.subspan(1);
        }
        auto payload = rest.first(length);
        rest = rest.subspan(length);
        auto header = decode_send_header(header_bytes);
        if (!header) continue;
        fuzz_require(header->msg_seq >= 1 && header->offset <= header->total, "a decoded header is consistent");
        auto again = encode_send_header(*header);
        fuzz_require(std::equal(again.begin(), again.end(), header_bytes.begin()), "a decoded header re-encodes");
        if (!reassembler.add(*header, payload)) continue;
        while (const auto* message = reassembler.ready()) {
            (void)message->size();
            reassembler.pop_ready();
            ++released;
            fuzz_require(reassembler.last_delivered() == released, "messages come out in order, each once");
        }
    }
    return 0;
}
