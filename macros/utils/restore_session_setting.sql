{#- Put back what set_session_setting replaced (`<undefined>` means it was not set). -#}
{% macro restore_session_setting(key, previous) %}
  {{ return(adapter.dispatch('restore_session_setting', 'lakehouse')(key, previous)) }}
{% endmacro %}

{% macro default__restore_session_setting(key, previous) %}
  {%- if previous is none or previous == '<undefined>' -%}
    {%- do run_query('reset ' ~ key) -%}
  {%- else -%}
    {%- do run_query('set ' ~ key ~ ' = ' ~ previous) -%}
  {%- endif -%}
{% endmacro %}
