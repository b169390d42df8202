{#-
  Set a Spark session setting for the statements that follow and return its previous value,
  for restore_session_setting. Settings are per session, so set/restore brackets one write.
-#}
{% macro set_session_setting(key, value) %}
  {{ return(adapter.dispatch('set_session_setting', 'lakehouse')(key, value)) }}
{% endmacro %}

{% macro default__set_session_setting(key, value) %}
  {%- set previous = run_query('set ' ~ key).rows[0][1] -%}
  {%- do run_query('set ' ~ key ~ ' = ' ~ value) -%}
  {{ return(previous) }}
{% endmacro %}
