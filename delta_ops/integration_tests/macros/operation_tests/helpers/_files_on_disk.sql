{#- The data files in a table's directory, referenced or not (what VACUUM removes): Spark's
    file listing of the location, which leaves out _delta_log. -#}
{% macro _files_on_disk(name) %}
  {{ return(_scalar('select count(*) from binaryFile.`' ~ _detail_of(name).location ~ '`') | int) }}
{% endmacro %}
