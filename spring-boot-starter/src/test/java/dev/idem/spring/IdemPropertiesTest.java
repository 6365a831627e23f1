package dev.idem.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idem.listener.ListenerSetting;
import org.junit.jupiter.api.Test;
import org.springframework.beans.BeanWrapperImpl;

class IdemPropertiesTest {

    /** A setting the listener support adds is bound from {@code idem.listeners.<name>.*} only with its property here. */
    @Test
    void everyListenerSettingIsAPropertyOfItsTypeUnsetByDefault() {
        BeanWrapperImpl listener = new BeanWrapperImpl(new IdemProperties.Listener());
        for (ListenerSetting<?> setting : ListenerSetting.all()) {
            assertThat(listener.isWritableProperty(setting.member())).as(setting.key()).isTrue();
            assertThat(listener.getPropertyType(setting.member())).as(setting.key()).isEqualTo(setting.type());
            assertThat(listener.getPropertyValue(setting.member())).as(setting.key()).isNull();
        }
    }
}
