package dev.idem.spring.app;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/** A Spring Boot application with one idempotent listener, as a user writes it. */
@SpringBootApplication
public class OrdersApp {
}
