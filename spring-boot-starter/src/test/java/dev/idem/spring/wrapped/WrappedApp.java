package dev.idem.spring.wrapped;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/** A Spring Boot application whose existing spring-kafka listeners get Idem put around them. */
@SpringBootApplication
public class WrappedApp {
}
