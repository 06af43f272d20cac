# The example application as an image, for docker-compose.cluster*.yml.
FROM node:20-bookworm-slim
WORKDIR /app
COPY . .
RUN npm ci --no-audit --no-fund
ENV NODE_ENV=production HOST=0.0.0.0 PORT=1337
EXPOSE 1337
CMD ["npx", "tsx", "fixtures/server.ts"]
