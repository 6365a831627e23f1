package dev.idem.spring.outbox;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/** A Spring Boot application whose listener and service send through Idem's outbox, as a user writes them. */
@SpringBootApplication
public class OutboxApp {
}
