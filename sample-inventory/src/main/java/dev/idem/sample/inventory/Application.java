package dev.idem.sample.inventory;

import io.micronaut.runtime.Micronaut;

/** Starts the inventory service: its listeners, then its HTTP server. */
public final class Application {

    private Application() {
    }

    public static void main(String[] args) {
        Micronaut.run(Application.class, args);
    }
}
