// Fuzz target: the address blob a peer hands over (Open MPI modex, a socket,
// a file) and tent_connect decodes. One that decodes keeps every bound.
#include "frame_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace tent::wire;
    static constexpr FrameType kBlob[] = {FrameType::AddressBlob};
    auto bytes = with_type_among(std::span<const std::uint8_t>(data, size), kBlob);
    auto frame = check_frame_bytes(bytes);
    if (!frame) return 0;
    const auto* blob = std::get_if<AddressBlob>(&frame->body);
    fuzz_require(blob != nullptr, "an address blob frame holds an address blob");
    fuzz_require(blob->engine_id != 0, "a peer's engine id is not zero");
    fuzz_require(!blob->hostname.empty() && blob->hostname.size() <= kMaxHostnameLength, "the hostname is bounded");
    fuzz_require(blob->tcp.size() <= kMaxTcpAddresses && blob->hcas.size() <= kMaxDevices, "the lists are bounded");
    for (const auto& hca : blob->hcas)
        fuzz_require(!hca.device.empty() && hca.device.size() <= kMaxDeviceNameLength &&
                         hca.qpns.size() <= kMaxQpsPerDevice,
                     "an HCA entry is bounded");
    return 0;
}
