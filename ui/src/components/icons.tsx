// Inline SVG icons (no emoji: headless/minimal Linux installs often lack an emoji font).

export function ThumbIcon(props: { down?: boolean; size?: number }) {
  const s = props.size ?? 16;
  return (
    <svg
      width={s}
      height={s}
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      stroke-width="2"
      stroke-linecap="round"
      stroke-linejoin="round"
      aria-hidden="true"
      class="icon"
      style={props.down ? { transform: "rotate(180deg)" } : undefined}
    >
      <path d="M3 10h4v11H3z" />
      <path d="M7 10l4-8c1.4 0 2.5 1.1 2.5 2.5V8h5.6a2 2 0 0 1 2 2.4l-1.5 8.6a2 2 0 0 1-2 1.6H7" />
    </svg>
  );
}
