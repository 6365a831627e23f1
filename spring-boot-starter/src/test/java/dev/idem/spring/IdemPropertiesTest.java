package dev.idem.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.listener.ListenerSetting;
import java.time.DateTimeException;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.beans.BeanWrapperImpl;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

class IdemPropertiesTest {

    /** A setting the listener support adds is bound from {@code idem.listeners.<name>.*} only with its property here. */
    @Test
    void everyListenerSettingIsAPropertyOfItsTypeUnsetByDefault() {
        BeanWrapperImpl listener = new BeanWrapperImpl(new IdemListenerProperties());
        for (ListenerSetting<?> setting : ListenerSetting.all()) {
            assertThat(listener.isWritableProperty(setting.member())).as(setting.key()).isTrue();
            assertThat(listener.getPropertyType(setting.member())).as(setting.key()).isEqualTo(setting.type());
            assertThat(listener.getPropertyValue(setting.member())).as(setting.key()).isNull();
        }
    }

    @Test
    void exceptionClassesBindFromTheirNames() {
        IdemProperties bound = new Binder(new MapConfigurationPropertySource(Map.of(
                "idem.listeners.orders.fatal-exceptions", "java.lang.ArithmeticException, java.time.DateTimeException",
                "idem.listeners.orders.consume-from", "first-offset")))
                .bind("idem", IdemProperties.class).get();
        IdemListenerProperties orders = bound.getListeners().get("orders");
        assertThat(orders.getFatalExceptions()).containsExactly(ArithmeticException.class, DateTimeException.class);
        assertThat(orders.getConsumeFrom()).isEqualTo(dev.idem.listener.ConsumeFrom.FIRST_OFFSET);
    }
}
