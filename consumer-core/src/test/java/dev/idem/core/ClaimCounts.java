package dev.idem.core;

import dev.idem.core.spi.ClaimRequest;
import dev.idem.core.spi.ClaimStore;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.Map;

/** A claim store that counts how often each key is claimed, by its value, and does the rest as the one it wraps. */
final class ClaimCounts {

    private ClaimCounts() {
    }

    static ClaimStore counting(ClaimStore store, Map<String, Integer> claims) {
        return (ClaimStore) Proxy.newProxyInstance(ClaimStore.class.getClassLoader(), new Class<?>[] {ClaimStore.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("claim")) {
                        @SuppressWarnings("unchecked")
                        List<ClaimRequest> requests = (List<ClaimRequest>) args[0];
                        requests.forEach(request -> claims.merge(request.key().value(), 1, Integer::sum));
                    }
                    try {
                        return method.invoke(store, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }
}
