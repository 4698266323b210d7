// The checks every transport makes on a request for a communicator (Collectives::GetCommunicator)
// before it looks at its cache, so that all transports word them alike.
#ifndef EMBER_COLLECTIVES_COMMUNICATOR_REQUEST_H_
#define EMBER_COLLECTIVES_COMMUNICATOR_REQUEST_H_

#include "absl/status/status.h"
#include "collectives/types.h"

namespace ember::collectives {

// InvalidArgument when `clique` has no devices or `rank` is not one of its ranks.
absl::Status CheckCommunicatorRequest(const CliqueKey& clique, RankId rank);

}  // namespace ember::collectives

#endif  // EMBER_COLLECTIVES_COMMUNICATOR_REQUEST_H_
