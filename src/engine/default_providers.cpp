#include "engine/default_providers.h"

#include "engine/tcp_provider.h"

namespace tent {

Result<std::vector<std::unique_ptr<TransportProvider>>> make_default_providers(const Config& config) {
    std::vector<std::unique_ptr<TransportProvider>> providers;
    // The verbs provider joins here when it lands; TCP is always there.
    auto tcp = TcpProvider::create(config);
    if (!tcp) return tcp.status();
    providers.push_back(std::move(*tcp));
    return providers;
}

} // namespace tent
