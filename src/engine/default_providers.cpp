#include "engine/default_providers.h"

#include "transport/tcp/tcp_provider.h"
#include "transport/verbs/verbs_provider.h"

namespace tent {

Result<std::vector<std::unique_ptr<TransportProvider>>> make_default_providers(const Config& config) {
    std::vector<std::unique_ptr<TransportProvider>> providers;
    // RDMA first (preferred by the selector's order), TCP always.
    auto verbs = VerbsProvider::create(config);
    if (!verbs) return verbs.status();
    if ((*verbs)->device_count() > 0) providers.push_back(std::move(*verbs));
    auto tcp = TcpProvider::create(config);
    if (!tcp) return tcp.status();
    providers.push_back(std::move(*tcp));
    return providers;
}

} // namespace tent
