package dev.idem.redis;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class RootMessageTest {

    @Test
    void theRootMessageOfACauseCycleIsFoundInBoundedTime() throws Exception {
        RuntimeException a = new RuntimeException("A");
        a.initCause(new IllegalStateException("B", a));

        assertThat(CompletableFuture.supplyAsync(() -> RedisScripts.rootMessage(a)).get(5, TimeUnit.SECONDS))
                .isEqualTo("B");
    }
}
